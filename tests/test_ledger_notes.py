"""The live service's checkpoint notes in one append-only file (`checkpoints/notes`, ledger/notelog.py):
every note found by its size, every note checked by verify (tampering named), a torn last note cut
and signed again, the per-file layout of older ledgers still read, and the tiles of every signed
size served (`hash_tile`) before the full checkpoint writes them (DESIGN.md ledger/, issue 14)."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from ledger import store
from ledger.checkpoints import checkpoint_path, checkpoint_sizes, kept_note, newest_checkpoint
from ledger.notelog import NoteFile, notes_path
from ledger.notes import Signer
from ledger.recorder import validate_lines
from ledger.store import load_verifier
from ledger.tlog import hash_tile
from ledger.verify import verify
from tests.ledger_support import game_lines
from tests.test_ledger_tiles import _spec_hashes, _spec_path, _spec_root


def _live(root: Path, commits: int = 6, per: int = 30, first: int = 40) -> list[int]:
    """`first` entries under a full checkpoint, then `commits` live group commits (notes appended to
    checkpoints/notes); closed without a full checkpoint, as a crash leaves it. Returns their sizes."""
    store.init(root, origin="test.local/notes")
    sizes = []
    with store.Ledger.open(root) as led:
        led.append(validate_lines(game_lines(4, first // 4), led.config.max_entry_bytes))
        led.checkpoint()
        for n in range(commits):
            lines = game_lines(3, per // 3, start=first // 4 + n * (per // 3))
            led.append(validate_lines(lines, led.config.max_entry_bytes))
            sizes.append(led.checkpoint(index=False).size)
    return sizes


def _newest(root: Path) -> int:
    newest = newest_checkpoint(root, load_verifier(root))
    assert newest is not None
    return newest.size


def _notes(root: Path) -> list[bytes]:
    return notes_path(root).read_bytes().split(b"\0")[:-1]


def test_each_note_is_found_by_its_size_in_a_large_notes_file(tmp_path: Path) -> None:
    """The binary search over the file's bytes finds every size and no absent one (synthetic notes:
    the search reads only their size line)."""
    root = tmp_path / "L"
    (root / "checkpoints").mkdir(parents=True)
    sizes = [3 * i + 1 for i in range(2000)]  # some 100 KB: many 8 KB chunks
    notes_path(root).write_bytes(b"".join(b"o\n%d\nroot=\n\n\xe2\x80\x94 o sig%s\n\0" % (s, b"x" * (s % 97)) for s in sizes))
    with NoteFile(root) as notes:
        for size in sizes:
            found = notes.find(size)
            assert found is not None and found.size == size and found.data.split(b"\n")[1] == b"%d" % size
        assert all(notes.find(size) is None for size in (0, 2, 3, 5999, 6000, 10**9))
        assert [n.size for n in notes.last(2)] == sizes[-2:]
        assert [n.size for n in notes] == sizes
    assert checkpoint_sizes(root) == sizes


def test_a_changed_note_in_the_middle_of_the_notes_file_is_named_by_verify(tmp_path: Path) -> None:
    root = tmp_path / "L"
    sizes = _live(root)
    assert verify(root).ok
    whole = notes_path(root).read_bytes()
    third = _notes(root)[2]
    at = whole.index(third) + len(third) - 10  # in its signature
    changed = bytearray(whole)
    changed[at] = ord("A") if changed[at] != ord("A") else ord("B")
    notes_path(root).write_bytes(bytes(changed))
    report = verify(root)
    assert not report.ok
    assert str(report.error).startswith(f"checkpoint of size {sizes[2]} (checkpoints/notes at byte {whole.index(third)})"), report.error


def test_a_note_cut_out_of_the_notes_file_is_named_by_verify(tmp_path: Path) -> None:
    root = tmp_path / "L"
    sizes = _live(root)
    notes = _notes(root)
    notes_path(root).write_bytes(b"".join(n + b"\0" for i, n in enumerate(notes) if i != 2))
    report = verify(root)
    assert not report.ok and "index/checkpoints: record" in str(report.error) and str(sizes[2]) in str(report.error), report.error
    assert not report.ok


def test_a_note_cut_short_by_a_crash_is_cut_and_signed_again(tmp_path: Path) -> None:
    """A crash during a note's append (its `index/checkpoints` record synced before it) leaves it
    without its NUL: verify notes it; the next writer cuts it and signs that size again, to the
    same note (Ed25519 signatures are deterministic), and the roots are unchanged."""
    root = tmp_path / "L"
    sizes = _live(root)
    last = kept_note(root, sizes[-1])
    whole = notes_path(root).read_bytes()
    notes_path(root).write_bytes(whole[:-40])
    assert _newest(root) == sizes[-2]
    report = verify(root)
    assert report.ok, report.error
    assert any("a checkpoint note cut short at the end of checkpoints/notes" in n for n in report.notes), report.notes
    with store.Ledger.open(root) as led:
        assert "cut the checkpoint note a crash left cut short" in (led.recovered or "")
        assert led.checkpoint_size == sizes[-1]
    assert kept_note(root, sizes[-1]) == last
    assert verify(root).ok


def test_a_ledger_in_the_per_file_layout_opens_and_verifies_with_the_same_roots(tmp_path: Path) -> None:
    """Before the notes file, each live commit's note had its own file (`checkpoints/<size>.note`):
    such a ledger opens and verifies as it is (readers look in both places), later commits append
    to the notes file, and every note keeps its root."""
    root = tmp_path / "L"
    sizes = _live(root)
    for note in _notes(root):  # the layout the code before wrote
        size = int(note.split(b"\n")[1])
        checkpoint_path(root, size).write_bytes(note)
    notes_path(root).unlink()
    roots = {size: kept_note(root, size).split("\n")[2] for size in sizes}
    assert verify(root).ok
    assert _newest(root) == sizes[-1]
    with store.Ledger.open(root) as led:
        led.append(validate_lines(game_lines(3, 5, start=70), led.config.max_entry_bytes))
        grown = led.checkpoint(index=False).size
    assert [int(n.split(b"\n")[1]) for n in _notes(root)] == [grown]
    assert {size: kept_note(root, size).split("\n")[2] for size in sizes} == roots
    assert checkpoint_sizes(root)[-len(sizes) - 1:] == [*sizes, grown]
    report = verify(root)
    assert report.ok and report.signed == grown, report


def test_a_logged_note_co_signed_gets_its_own_file_and_verify_requires_it(tmp_path: Path) -> None:
    root = tmp_path / "L"
    sizes = _live(root)
    arbiter = Signer.generate("arbiter.test")
    with store.Ledger.open(root) as led:
        led.cosign(arbiter, sizes[2])
    assert checkpoint_path(root, sizes[2]).is_file()
    assert kept_note(root, sizes[2]).count("— ") == 2
    report = verify(root)
    assert report.ok and any("co-signed by arbiter.test" in n for n in report.notes), report
    checkpoint_path(root, sizes[2]).unlink()  # the logged note alone lacks the co-signature the log records
    report = verify(root)
    assert not report.ok and "arbiter.test" in str(report.error), report.error


def test_every_signed_size_has_its_tiles_served_and_the_static_files_lag_together(tmp_path: Path) -> None:
    """Live commits across tile boundaries (levels 0 and 1): after each commit, the tiles of its
    size as `hash_tile` serves them (computed where not written yet) give its signed root by the
    independent tlog-tiles reading; and the ledger directory itself, as a static file server shows
    it, holds a `checkpoint` file whose tiles are all present."""
    root = tmp_path / "L"
    store.init(root, origin="test.local/notes")
    with store.Ledger.open(root) as led:
        led.append(validate_lines(game_lines(4, 75), led.config.max_entry_bytes))
        led.checkpoint()
        for n in range(12):
            led.append(validate_lines(game_lines(4, 25, start=75 + 25 * n), led.config.max_entry_bytes))
            signed = led.checkpoint(index=n % 5 == 4)
            served = tmp_path / f"served-{n}"
            for level in range((signed.size.bit_length() + 7) // 8):
                count = signed.size >> (8 * level)
                for t in range(-(-count // 256)):
                    width = min(256, count - 256 * t)
                    path = served / (_spec_path(level, t) if width == 256 else _spec_path(level, t, width))
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(hash_tile(root, level, t, width))
            assert _spec_root(served, signed.size) == signed.root, signed.size
            note = (root / "checkpoint").read_text().split("\n")
            assert _spec_root(root, int(note[1])) == base64.b64decode(note[2])
    assert signed.size == 1500 and len(_spec_hashes(root, 1, 5)) == 5
    assert json.loads((root / "index" / "head").read_text())["size"] == 1300  # the last full checkpoint
    assert verify(root).ok


def test_no_note_is_kept_twice(tmp_path: Path) -> None:
    """A note appended again for a size already in the notes file is named by verify."""
    root = tmp_path / "L"
    _live(root)
    notes = _notes(root)
    notes_path(root).write_bytes(b"".join(n + b"\0" for n in [*notes[:3], notes[2], *notes[3:]]))
    report = verify(root)
    assert not report.ok, report


def test_the_group_commit_creates_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A live group commit that fills no tile creates no file: the segment, the history record and
    the note are appended to files that exist (the point of the notes file)."""
    root = tmp_path / "L"
    _live(root, commits=2)
    with store.Ledger.open(root) as led:
        led.append(validate_lines(game_lines(3, 2, start=30), led.config.max_entry_bytes))
        led.checkpoint(index=False)
        created: list[str] = []
        real = os.open

        def counting(path, flags, *args, **kwargs):  # noqa: ANN001, ANN202
            if flags & os.O_CREAT and not os.path.lexists(path):
                created.append(str(path))
            return real(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", counting)
        for n in range(3):
            led.append(validate_lines(game_lines(3, 2, start=32 + 2 * n), led.config.max_entry_bytes))
            led.checkpoint(index=False)
        monkeypatch.setattr(os, "open", real)
    assert created == []


def test_a_note_that_fails_to_be_written_leaves_no_trace_the_next_one_trips_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk error part-way through a note's append (half its bytes written): the commit is not
    acknowledged (CheckpointError), the half note is cut off again and its history record is cut
    by the next checkpoint, so the next commit's note is whole and verify is clean."""
    import errno

    from ledger import notelog
    from ledger.errors import CheckpointError

    root = tmp_path / "L"
    _live(root, commits=2)
    real = notelog.write_all

    def half(fd: int, data: bytes) -> None:
        real(fd, data[:len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    with store.Ledger.open(root) as led:
        led.append(validate_lines(game_lines(3, 2, start=30), led.config.max_entry_bytes))
        monkeypatch.setattr(notelog, "write_all", half)
        with pytest.raises(CheckpointError):
            led.checkpoint(index=False)
        monkeypatch.setattr(notelog, "write_all", real)
        led.append(validate_lines(game_lines(3, 2, start=32), led.config.max_entry_bytes))
        after = led.checkpoint(index=False).size
    assert int(_notes(root)[-1].split(b"\n")[1]) == after and notes_path(root).read_bytes().endswith(b"\0")
    report = verify(root)
    assert report.ok and report.signed == after, report


def test_proofs_receipts_and_consistency_find_the_logged_notes(tmp_path: Path) -> None:
    """`prove` (a stream whose covering checkpoint is a logged note, with its stream commitment),
    `prove_consistency` between two logged sizes and `stored_checkpoint` (the service's receipts of
    re-sends) read the notes file, and what they give verifies with the public key alone."""
    from ledger import check_bundle, prove
    from ledger.bundle import check_consistency, prove_consistency
    from ledger.checkpoints import stored_checkpoint
    from tests.ledger_support import event_line

    root = tmp_path / "L"
    sizes = _live(root)
    with store.Ledger.open(root) as led:
        led.append(validate_lines([event_line("solo", seq) for seq in range(3)], led.config.max_entry_bytes))
        covering = led.checkpoint(index=False)
        led.append(validate_lines(game_lines(3, 2, start=70), led.config.max_entry_bytes))
        led.checkpoint(index=False)
        led.checkpoint()  # the full checkpoint: the stream index made durable
    assert not checkpoint_path(root, covering.size).exists()
    verifier = load_verifier(root)
    bundle = prove(root, "solo")
    assert bundle.checkpoint == covering.note
    assert check_bundle(bundle, verifier).complete
    proof = prove_consistency(root, sizes[1], sizes[3])
    old, new = check_consistency(proof, verifier)
    assert (old.size, new.size) == (sizes[1], sizes[3])
    assert stored_checkpoint(root, sizes[2], verifier).note == kept_note(root, sizes[2])


@pytest.mark.parametrize("others", [0, 2, 5], ids=["notes-file-only", "two-more-names", "five-more-names"])
def test_the_newest_kept_note_is_found_past_the_notes_file_and_other_names(tmp_path: Path, others: int) -> None:
    """The rollback check at every open (a kept note newer than the served checkpoint refuses the
    writer) finds the newest note without sorting the directory: names above the notes, the
    notes file's and any an insider left (temporary files, junk), never hide the newest note."""
    from ledger.checkpoints import newest_size

    root = tmp_path / "ledger"
    sizes = _live(root)
    newest_file = max(int(p.name[:-5]) for p in checkpoint_path(root, 0).parent.glob("*.note"))
    assert newest_size(root) == max(sizes[-1], newest_file)
    for n in range(others):
        (checkpoint_path(root, 0).parent / f"zz-{n}.tmp").write_bytes(b"")
    assert newest_size(root) == max(sizes[-1], newest_file)
    (checkpoint_path(root, 10**12)).write_bytes(b"")  # a note of a size never signed, planted
    assert newest_size(root) == 10**12
    with pytest.raises(Exception, match="rolled back"):
        store.Ledger.open(root)


def test_the_rollback_check_lists_the_notes_only_when_their_directory_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-event `record` costs the same on the first day and at the end of a season: the
    writer keeps, in its MACed index head, the newest note kept in its own file and when
    `checkpoints/` last changed, and lists the notes again only when the directory changed since
    (a note added or removed by anyone), so a planted newer note is still seen and refused."""
    from ledger import checkpoints as checkpoints_module
    from ledger import store as store_module

    root = tmp_path / "ledger"
    store.init(root)
    with store.Ledger.open(root) as led:
        led.append(validate_lines(game_lines(2, 3), led.config.max_entry_bytes))
        led.checkpoint()
    listed: list[Path] = []
    original = checkpoints_module.newest_note_file
    def counted(at: Path) -> int:
        listed.append(at)
        return original(at)
    monkeypatch.setattr(store_module, "newest_note_file", counted)
    with store.Ledger.open(root) as led:
        signed = led.checkpoint_size
    assert listed == []  # nothing changed in checkpoints/ since the head was written
    checkpoint_path(root, signed + 10).write_bytes(b"")  # a newer note kept while the served one is older
    with pytest.raises(Exception, match="rolled back"):
        store.Ledger.open(root)
    assert listed == [root]


def test_one_rule_names_a_note_and_verify_refuses_a_note_named_otherwise(tmp_path: Path) -> None:
    """A kept note's name is `checkpoint_path`'s (20-digit size): `checkpoint_sizes`, the readers, the
    rollback check and `verify` all go by `NOTE_NAME`. A copy of a real note planted under a short
    name (`5.note`) is then seen by none of them as a note, and `verify` fails naming the file."""
    from ledger.checkpoints import list_checkpoint_names, newest_size

    root = tmp_path / "ledger"
    sizes = _live(root)
    before = (checkpoint_sizes(root), newest_size(root))
    real = next(p for p in checkpoint_path(root, 0).parent.glob("*.note"))
    (real.parent / "5.note").write_bytes(real.read_bytes())
    strays: list[str] = []
    assert (checkpoint_sizes(root), newest_size(root)) == before and 5 not in dict(list_checkpoint_names(root, strays))
    assert strays == ["5.note"] and sizes[-1] == before[1]
    report = verify(root)
    assert not report.ok and "5.note" in (report.error or "")
    (real.parent / "5.note").unlink()
    assert verify(root).ok
