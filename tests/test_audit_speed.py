"""The audit's work is done once (issue 32 goal 4): verify's checks stay whole, but no file is
opened once per checkpoint and no stored byte is read for the audit more often than it must be."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger import frames as frames_mod
from ledger import recorder as record_mod
from ledger import store, verify
from ledger.segments import list_segments
from tests.ledger_support import event_line

CHECKPOINTS = 12


@pytest.fixture()
def many_notes(tmp_path: Path) -> Path:
    """A ledger of one segment with a checkpoint after each of CHECKPOINTS record calls."""
    root = tmp_path / "ledger"
    store.init(root, origin="test.local/speed")
    for seq in range(CHECKPOINTS):
        record_mod.record(root, [event_line("g", seq)])
    return root


def test_the_history_check_opens_each_segment_once_not_once_per_checkpoint(many_notes: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """DESIGN.md ledger/Verify (the consistency of successive checkpoints, index/checkpoints against
    the frames): verify checked each checkpoint's frame position with two opens of its segment, some
    20,000 opens on the 10,000-game event; it opens each segment once and still checks every position."""
    opened: list[Path] = []
    real = frames_mod.open_regular

    def counting(path: Path):  # noqa: ANN202 - a binary file object
        if path.parent.name == "segments":
            opened.append(path)
        return real(path)

    monkeypatch.setattr(frames_mod, "open_regular", counting)
    from ledger.commitments import check_history

    sizes = list(range(1, CHECKPOINTS + 1))
    starts = [first for first, _ in list_segments(many_notes / "segments")]
    assert check_history(many_notes, [0, *sizes], starts) is None
    assert len(opened) == len(starts) < CHECKPOINTS


def test_a_moved_checkpoint_position_is_still_named(many_notes: Path) -> None:
    """The same check with one open a segment still names a checkpoint whose recorded frame end is
    not its last entry's (index/checkpoints edited by an insider): the tenth record's offset moved."""
    history = many_notes / "index" / "checkpoints"
    data = bytearray(history.read_bytes())
    data[24 * 10 + 16] ^= 0x04
    history.write_bytes(bytes(data))
    report = verify(many_notes)
    assert not report.ok and "index/checkpoints: checkpoint 10 does not end at byte" in (report.error or "")


def test_the_audit_still_refuses_an_edited_stream_index_checked_beside_the_load(many_notes: Path) -> None:
    """DESIGN.md ledger/Verify (the stream index): the audit checks the index against the projection's
    events while DuckDB loads, in a thread; an index record pointing at another entry still stops
    the audit with no session."""
    from audit.query.session import open_verified_session
    from ledger.index import stream_path

    path = stream_path(many_notes, "g")
    data = bytearray(path.read_bytes())
    data[-16] ^= 1  # the entry index of the stream's last record
    path.write_bytes(bytes(data))
    report, session = open_verified_session(many_notes)
    assert not report.ok and (report.error or "").startswith("stream index: 索引给出流 ") and "/ the index gives entry " in (report.error or "")
    assert session is not None  # the projection was built; the certification refuses on the report
