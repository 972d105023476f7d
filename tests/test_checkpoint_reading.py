"""Checkpoint notes read first and their signatures checked later in one batch (as `verify` does)
give the verdict of `parse_checkpoint` then `cosigners`, note by note."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import pytest

from ledger import fastscan
from ledger.checkpoints import CheckpointReading, SignatureChecks, checkpoint_body, parse_checkpoint, read_checkpoint
from ledger.errors import SignatureError
from ledger.notes import Signer, add_signature, cosigners, sign_note

LOG = Signer.generate("log.example/tour")
WITNESSES = [Signer.generate("arbiter-zhang"), Signer.generate("arbiter-li")]


def _notes(rng: random.Random) -> list[str]:
    """Signed notes, some co-signed, then copies with one character changed, dropped or added."""
    good = []
    for size in range(0, 40, 3):
        note = sign_note(checkpoint_body(LOG.name, size, rng.randbytes(32)), LOG)
        for witness in WITNESSES[: size // 3 % 3]:
            note = add_signature(note, witness)
        good.append(note)
    good.append(sign_note(checkpoint_body("other.example/log", 5, rng.randbytes(32)), LOG))  # wrong origin
    good.append(sign_note(f"{LOG.name}\n7\nnot base64\n", LOG))  # malformed body
    good.append(sign_note(checkpoint_body(LOG.name, 8, rng.randbytes(32)), WITNESSES[0]))  # not by the log
    notes = list(good)
    for _ in range(400):
        note = rng.choice(good)
        i = rng.randrange(len(note))
        change = rng.choice(["flip", "drop", "add"])
        if change == "flip":
            note = note[:i] + rng.choice("AB+/=\n 0—x") + note[i + 1:]
        elif change == "drop":
            note = note[:i] + note[i + 1:]
        else:
            note = note[:i] + rng.choice("A\n— ") + note[i:]
        notes.append(note)
    return notes


def _sequential(note: str) -> object:
    try:
        checkpoint = parse_checkpoint(note, LOG.verifier)
        return checkpoint, cosigners(note, [w.verifier for w in WITNESSES])
    except SignatureError as exc:
        return str(exc)


def _verdict(reading: CheckpointReading, checks: SignatureChecks) -> object:
    try:
        return reading.outcome(checks)
    except SignatureError as exc:
        return str(exc)


@pytest.mark.parametrize("accelerated", [True, False])
@pytest.mark.parametrize("pool", [False, True])
def test_batched_reading_agrees_with_parse_checkpoint(monkeypatch: pytest.MonkeyPatch, accelerated: bool, pool: bool) -> None:
    if accelerated and not fastscan.ACCELERATED:
        pytest.skip("C accelerator not built")
    monkeypatch.setattr(fastscan, "ACCELERATED", accelerated)
    notes = _notes(random.Random(11))
    checks = SignatureChecks()
    with ThreadPoolExecutor(1) as executor:
        readings = []
        for n, note in enumerate(notes):
            readings.append(read_checkpoint(n, f"{n}.note", note, LOG.verifier, [w.verifier for w in WITNESSES], checks))
            if pool and n % 50 == 0:
                checks.start(executor)
        checks.wait()
    verdicts = [_verdict(r, checks) for r in readings]
    assert verdicts == [_sequential(note) for note in notes]
    assert sum(isinstance(v, tuple) for v in verdicts) > 13 and sum(isinstance(v, str) for v in verdicts) > 200
    for reading, verdict in zip(readings, verdicts):
        if reading.malformed:
            assert isinstance(verdict, str)
