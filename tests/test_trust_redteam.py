"""Issue 28 attacked again, through the command line, by someone who did not write the fixes.

An insider who can write the ledger's files but holds no `signer.key` either edits an entry inside
the signed range (a valid frame and CRC) or appends committed frames after the newest signed note.
The readers that `standings`, `show` and `replay` already guard were joined by the exports and
`prove`: each must refuse what does not match the signed tree, stop at the signed size, and say the
size it verified to and whether the log's key was pinned (DESIGN.md "Nothing unsigned counts").
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from ledger import LogReader
from ledger.fastscan import frame_batch
from ledger.layout import PUBLIC_KEY, SEGMENTS
from ledger.segments import frame, iter_frames, list_segments
from schemas import encode
from schemas.common import MoveTimeUsed
from tests.ledger_support import cli, flat

TOURNAMENT = "checkers-cup-7"
GAME = f"{TOURNAMENT}/r1/t1/g1"
UNPINNED = "log key: taken from the ledger directory"
PINNED = "log key: pinned"
CHANGED = ("the signed range was changed", "does not match the signed tree")


@pytest.fixture(scope="module")
def season(simulated_season: Callable[..., Path]) -> Path:
    """A checkers tournament of one round (`root` and `genuine` in tests/conftest.py copy it and its key)."""
    return simulated_season("redteam", "checkers", "--tournament", "--players", "4", "--rounds", "1", "--games-per-round", "1",
                            "--seed", "7")


def _flip_winner(root: Path) -> int:
    """The insider's edit: the claimed result of GAME reversed, in place, with a valid frame and CRC; returns its entry."""
    first, path = list_segments(root / SEGMENTS)[0]
    data = path.read_bytes()
    for index, offset, payload, commit in iter_frames(data, first):
        event = json.loads(payload.tobytes())
        if event["stream"] == GAME and event["kind"] == "game.ended":
            old = frame(index, payload.tobytes(), commit)
            text = payload.tobytes()
            edited = text.replace(b'"points":[1.0,0.0]', b'"points":[0.0,1.0]') if b'"points":[1.0,0.0]' in text else \
                text.replace(b'"points":[0.0,1.0]', b'"points":[1.0,0.0]')
            assert edited != text and len(edited) == len(text)
            path.write_bytes(data[:offset] + frame(index, edited, commit) + data[offset + len(old):])
            return index
    raise AssertionError("no game.ended in the first segment")


def _forge_tail(root: Path, count: int = 3) -> int:
    """The insider's forgery: committed frames with valid CRCs after the last entry (no key needed); returns the signed size."""
    signed, unsigned = LogReader(root).extent()
    assert unsigned == 0
    payloads = [encode(MoveTimeUsed(stream="forged/g1", seq=seq, ts=1_000 + seq, seat=0, ms=500)) for seq in range(count)]
    with open(list_segments(root / SEGMENTS)[-1][1], "ab") as f:
        f.write(frame_batch(signed, payloads, True))
    return signed


def _exports(root: Path, out: Path) -> dict[str, list[str]]:
    return {"jsonl": ["export", "--jsonl", str(out / "log.jsonl")],
            "tiles": ["export", "--tiles", str(out / "tiles")],
            "record-game": ["export", "--format", "record", "--game", GAME, "--out", str(out / "g1.txt")],
            "record-tournament": ["export", "--format", "record", "--tournament", TOURNAMENT, "--out", str(out / "records")],
            "prove": ["prove", "--stream", GAME, "--out", str(out / "g1.proof.json")],
            "parquet": ["export", "--parquet", str(out / "lake")],
            "consistency": ["consistency", "--old", "5", "--out", str(out / "c.json")],
            "witness": ["witness", "--state", str(out / "w.state")]}


@pytest.mark.parametrize("command", ["jsonl", "tiles", "record-game", "record-tournament", "prove"])
def test_an_entry_edited_in_the_signed_range_is_refused_by_the_exports_and_prove(root: Path, genuine: str, tmp_path: Path,
                                                                                  command: str) -> None:
    """28.6: the claimed result of a game rewritten inside the signed range (valid frame and CRC) is
    refused (exit 1, naming the entry: its hash differs from the one the tiles hold) by `export
    --jsonl/--tiles/--format record` and `prove`, and nothing is written: an export never hands on
    what `verify` rejects."""
    entry = _flip_winner(root)
    out = tmp_path / "out"
    out.mkdir()
    result = cli(*_exports(root, out)[command], "--ledger", str(root), "--key", genuine)
    assert result.exit_code == 1, result.output
    assert any(words in flat(result.output) for words in CHANGED) and f"entry {entry}" in flat(result.output), result.output
    assert list(out.iterdir()) == []


def test_the_exports_stop_at_the_signed_size_after_a_forged_tail(root: Path, genuine: str, tmp_path: Path) -> None:
    """28.1: frames an insider appended after the newest signed note are not exported as entries of
    the log: `export --jsonl` writes the signed entries only and says how many unsigned ones it left."""
    signed = _forge_tail(root)
    out = tmp_path / "log.jsonl"
    result = cli("export", "--jsonl", str(out), "--ledger", str(root), "--key", genuine)
    assert result.exit_code == 0, result.output
    lines = out.read_bytes().splitlines()
    assert len(lines) == signed and not any(b"forged/g1" in line for line in lines)
    assert "the 3 unsigned entries after the newest signed checkpoint are not shown" in flat(result.output)


@pytest.mark.parametrize("command", ["jsonl", "tiles", "record-game", "record-tournament", "prove", "parquet", "consistency", "witness"])
def test_the_exports_and_prove_say_the_size_verified_to_and_whether_the_key_was_pinned(root: Path, genuine: str, tmp_path: Path,
                                                                                         command: str) -> None:
    """28.4/28.6: every command that hands on results says which key checked them (pinned with --key,
    else taken from the directory and said to be unpinned) and the signed size it verified to."""
    size = LogReader(root).extent()[0]
    for pin, words in (([], UNPINNED), (["--key", genuine], PINNED)):
        out = tmp_path / f"out{len(pin)}"
        out.mkdir()
        result = cli(*_exports(root, out)[command], "--ledger", str(root), *pin)
        assert result.exit_code == 0, result.output
        text = flat(result.output)
        assert words in text and "verified against the signed checkpoint of size " in text, (command, result.output)
        said = int(text.split("verified against the signed checkpoint of size ")[1].split()[0])
        assert 0 < said <= size


@pytest.mark.parametrize("command", ["jsonl", "record-game", "prove", "consistency", "witness"])
def test_a_swapped_signer_pub_is_refused_by_the_exports_under_the_pinned_key(root: Path, genuine: str, tmp_path: Path,
                                                                                command: str) -> None:
    """28.4: with the insider's key put in `signer.pub` (and `signer.key` not readable here), an export
    under the pinned key (--key or MATCHLEDGER_LOG_KEY) refuses instead of exporting."""
    from ledger import Signer
    from ledger.layout import PRIVATE_KEY
    from ledger.notes import sign_note, split_note

    insider = Signer.generate(Signer.load(root / PRIVATE_KEY).name)
    for path in [*sorted((root / "checkpoints").glob("*.note")), root / "checkpoint"]:
        body, _ = split_note(path.read_text())
        path.write_text(sign_note(body, insider))
    (root / PUBLIC_KEY).write_text(str(insider.verifier) + "\n")
    (root / PRIVATE_KEY).unlink()
    out = tmp_path / "out"
    out.mkdir()
    result = cli(*_exports(root, out)[command], "--ledger", str(root), "--key", genuine)
    assert result.exit_code == 1 and "is not the pinned key" in flat(result.output), result.output
    assert list(out.iterdir()) == []


def test_a_writer_refuses_a_log_whose_every_note_was_removed(root: Path, tmp_path: Path) -> None:
    """28.1/28.7 (missing checkpoints are damage): an insider removes every checkpoint note, the served
    `checkpoint`, the index and the tiles; the writer (`record`, `repair`) refuses to open instead of
    signing the whole log again as a crash tail (after which `verify` could never pass again), and
    changes nothing."""
    from tests.ledger_support import snapshot

    for path in [*(root / "checkpoints").glob("*.note"), root / "checkpoint"]:
        path.unlink()
    shutil.rmtree(root / "index")
    shutil.rmtree(root / "tile")
    before = snapshot(root)
    empty = tmp_path / "none.jsonl"
    empty.write_bytes(b"")
    for args in (["record", str(empty)], ["repair"]):
        result = cli(*args, "--ledger", str(root))
        assert result.exit_code == 1 and "the notes were removed" in flat(result.output), (args, result.output)
        assert snapshot(root) == before, args
    assert not list((root / "checkpoints").glob("*.note"))


def test_a_batch_for_another_log_with_the_same_origin_string_is_refused(tmp_path: Path) -> None:
    """28.10 (batches replay across logs): staging and production were both created with `init --origin
    cup.example/log`, each with its own key; the same source is registered in both. A batch signed
    for staging must be refused by production."""
    from ledger import Ledger, Signer, init
    from ledger.sources import SourceRefused, change_sources, load_source_book, registration, sign_batch

    venue = Signer.generate("venue")
    books = []
    for name in ("staging", "production"):
        init(tmp_path / name, "cup.example/log")
        change_sources(tmp_path / name, lambda book, led: registration(book, led, "venue", venue.verifier, (), ["g/"]))
        with Ledger.open(tmp_path / name) as led:
            books.append(load_source_book(led))
    body = b'{"kind":"game.move_time","stream":"g/1","seq":0,"ts":1,"seat":0,"ms":5}\n'
    header = sign_batch(venue, body, books[0].origin)  # signed for staging: its origin and its key
    assert books[0].authenticate(header, body).name == "venue"  # staging takes it
    with pytest.raises(SourceRefused):
        books[1].authenticate(header, body)


def test_a_writer_refuses_a_replaced_key_pair_under_the_pinned_key(root: Path, genuine: str, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """28.4 (trust is anchored in a pinned key): an insider replaces `signer.key` and `signer.pub` with a
    pair of their own and re-signs every note. With the log's key pinned (MATCHLEDGER_LOG_KEY), the
    operator's writer (`record`, `appeal register`: one open) refuses to sign with it; nothing changes."""
    from ledger import Signer
    from ledger.layout import PRIVATE_KEY
    from ledger.notes import sign_note, split_note
    from tests.ledger_support import event_line, snapshot

    insider = Signer.generate(Signer.load(root / PRIVATE_KEY).name)
    for path in [*sorted((root / "checkpoints").glob("*.note")), root / "checkpoint"]:
        body, _ = split_note(path.read_text())
        path.write_text(sign_note(body, insider))
    (root / PUBLIC_KEY).write_text(str(insider.verifier) + "\n")
    (root / PRIVATE_KEY).unlink()
    insider.save(root / PRIVATE_KEY)
    events = tmp_path / "events.jsonl"
    events.write_bytes(event_line("late/g1", 0) + b"\n")
    monkeypatch.setenv("MATCHLEDGER_LOG_KEY", genuine)
    before = snapshot(root)
    result = cli("record", str(events), "--ledger", str(root))  # reads no log key of its own: the writer's open refuses
    assert result.exit_code == 1 and "is not the private key of the pinned key" in flat(result.output), result.output
    result = cli("appeal", "register", "--pub", genuine, "--role", "chief_referee", "--name", "X", "--ledger", str(root))
    assert result.exit_code == 1 and "the pinned key" in flat(result.output), result.output
    assert snapshot(root) == before


@pytest.mark.parametrize("accelerated", [True, False], ids=["accelerated", "pure"])
def test_a_source_cannot_smuggle_the_logs_own_kinds_in_a_json_array_body(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                           accelerated: bool) -> None:
    """28.2 (only the writer writes the log's own records): the JSON-array form of a batch body, with a
    `source.batch`, `source.registered` or `arbiter.registered` among ordinary events, or an event in
    a `log.*` stream, is refused whole (403) like the JSONL form, on both the accelerated and the
    pure-Python path; a stream named `<tournament>/log.sources` is only data."""
    import hashlib

    import ledger as ledger_api
    from ledger import Signer
    from schemas.log import BatchReceived
    from tests.ledger_support import event_line, snapshot
    from tests.serve_support import Server, make_source, post, signed

    if not accelerated:
        monkeypatch.setenv("MATCHLEDGER_NO_ACCEL", "1")
    root = tmp_path / "L"
    ledger_api.init(root, "redteam.test/log")
    attacker = make_source(tmp_path, root, "attacker", tournaments=["cup-B"])
    key = str(Signer.generate("evil").verifier)
    record = encode(BatchReceived(stream="cup-B/g", seq=1, ts=1, source="victim", signature="x", digest=hashlib.sha256(b"x").hexdigest(),
                                  entries=[(0, 1)], streams=["log.sources"], canonical=True))
    smuggled = {"source.batch": record,
                "source.registered": event_line("cup-B/g", 1, "source.registered", name="evil", key=key),
                "arbiter.registered": event_line("cup-B/g", 1, "arbiter.registered", verifier=key, role="chief_referee"),
                "log.arbiters": event_line("log.arbiters", 0)}
    with Server(root, "--no-live") as server:
        first = b"[" + event_line("cup-B/g", 0) + b"]"
        assert post(server.url, first, signed(attacker, first))[0] == 200
        before = snapshot(root)
        for name, event in smuggled.items():
            body = b"[" + event_line("cup-B/h", 0) + b"," + event + b"]"
            status, _, data = post(server.url, body, signed(attacker, body))
            assert status == 403 and json.loads(data)["error"] in ("log-kind", "log-stream"), (name, status, data)
            assert snapshot(root) == before, name
        body = b"[" + event_line("cup-B/log.sources", 0) + b"]"
        assert post(server.url, body, signed(attacker, body))[0] == 200
    with ledger_api.Ledger.open(root) as led:
        from ledger.sources import load_source_book

        assert set(load_source_book(led).sources) == {"attacker"}


def test_export_tiles_computes_the_tiles_from_the_checked_entries(root: Path, genuine: str, tmp_path: Path) -> None:
    """28.6 (nothing that does not match the signed tree is handed on): an insider flips a bit of a
    stored hash tile (`verify` names it); `export --tiles` still lays out the tiles of the signed tree,
    byte for byte those of the untouched log, computed from the entries it checked."""
    clean = tmp_path / "clean"
    assert cli("export", "--tiles", str(clean), "--ledger", str(root), "--key", genuine).exit_code == 0
    tile = root / "tile" / "0" / "000"
    data = bytearray(tile.read_bytes())
    data[32 * 3] ^= 1
    tile.write_bytes(bytes(data))
    assert "tile/0/000: hash 3 differs" in flat(cli("verify", "--ledger", str(root)).output)
    out = tmp_path / "out"
    result = cli("export", "--tiles", str(out), "--ledger", str(root), "--key", genuine)
    assert result.exit_code == 0, result.output
    files = sorted(p.relative_to(clean) for p in clean.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert all((clean / f).read_bytes() == (out / f).read_bytes() for f in files)


def test_hu_on_a_recorded_game_says_the_key_and_the_size_verified_to(tmp_path: Path) -> None:
    """28.4/28.6 (every command that shows results says the size it verified to and whether the key
    was pinned): `hu --game` judges a hand from the game's entries proved against the signed tree,
    and now says so, unpinned or under `--key`."""
    root = tmp_path / "P"
    assert cli("simulate", "paohuzi", "--games", "1", "--ledger", str(root)).exit_code == 0
    args = ["hu", "--game", "sim-paohuzi-1-g1", "--at", "10", "--ledger", str(root)]
    result = cli(*args)
    assert result.exit_code in (0, 3) and UNPINNED in flat(result.output), result.output
    result = cli(*args, "--key", str(root / PUBLIC_KEY), "--json")
    trust = json.loads(result.stdout)["trust"]
    assert trust["key"]["pinned"] and trust["verified_size"] == LogReader(root).extent()[0]


@pytest.mark.parametrize("inside", ["segments/00000000000000099999.seg", "checkpoints/x", "inner"])
def test_no_ledger_is_made_inside_another(root: Path, inside: str) -> None:
    """DESIGN.md threats (no output option writes inside a ledger directory): a careless `init` or
    `simulate --ledger` naming a path inside an existing ledger made a ledger there; one named like the
    next segment broke every reader and writer of the outer log ("segment … is not a regular file").
    It is refused (exit 2) and the outer ledger still verifies."""
    from tests.ledger_support import snapshot

    before = snapshot(root)
    for args in (["init"], ["simulate", "checkers", "--games", "1"]):
        result = cli(*args, "--ledger", str(root / inside))
        assert result.exit_code == 2 and "lies inside the ledger" in flat(result.output), (args, result.output)
        assert not (root / inside).exists() and snapshot(root) == before
    assert cli("verify", "--ledger", str(root)).exit_code == 0


def test_a_commit_mark_removed_inside_the_signed_range_is_damage(root: Path) -> None:
    """DESIGN.md reliability (every change inside a checkpointed range is detected) and 28.1: an insider
    clears the commit bit of the last frame the newest checkpoint signs and appends forged committed
    frames, so that one batch straddles the note. No writer ever does that (a note follows a commit
    mark), yet `verify` says ok; once a writer moves the forged frames aside, the log can never verify
    again. `verify` must call the missing commit mark damage at once."""
    signed = _forge_tail(root)
    first, path = list_segments(root / SEGMENTS)[-1]
    data = path.read_bytes()
    for index, offset, payload, commit in iter_frames(data, first):
        if index == signed - 1:
            assert commit
            old = frame(index, payload.tobytes(), True)
            path.write_bytes(data[:offset] + frame(index, payload.tobytes(), False) + data[offset + len(old):])
            break
    else:
        raise AssertionError("no frame of the last signed entry in the last segment")
    result = cli("verify", "--ledger", str(root))
    assert result.exit_code == 1 and "carries no commit mark" in " ".join(result.output.split()), result.output


@pytest.mark.parametrize("stream", ["cup\u2010B/r1/t1/g1", "cup-\uff22/r1/t1/g1", "cup-B/r1/t1/g1 ", " cup-B/r1/t1/g1", "cup-B/r1/t1/g1\t",
                                    "cup-B/r1/t1/g1\r", "./cup-B/g1", "cup-B/./g1", "cup-B/r1/.", "cup-B\\..\\cup-C"])
def test_look_alike_stream_ids_are_refused_by_the_contract(stream: str) -> None:
    """28.9/28.12 (stream squatting, stream ids): a stream id that reads like another (a Unicode
    hyphen or full-width letter, a space, tab or carriage return at an end, a `.` segment, a
    backslash path) is refused by the contract, naming the line and the field."""
    from schemas import ContractError, decode_line

    line = json.dumps({"kind": "game.move_time", "stream": stream, "seq": 0, "ts": 1, "seat": 0, "ms": 5}).encode()
    with pytest.raises(ContractError, match=r"^第 4 行 line 4: Expected a stream id.* - at `\$\.stream`$"):
        decode_line(line, 4)
