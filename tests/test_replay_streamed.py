"""`matchledger replay` reads the log game by game (issue 32.1): each game is folded once its last
entry is read and then dropped, the whole log is never held, and what is shown is still checked
against the signed root (DESIGN.md "Nothing unsigned counts")."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

import schemas
from audit.simulator.simulate import record_events
from ledger import Ledger, LogReader, init
from ledger.fastscan import frame_batch
from ledger.index import RECORD, stream_path
from ledger.layout import SEGMENTS
from ledger.reader import StoredEntries
from ledger.segments import list_segments
from replay.registry import GAMES
from replay.run import summarise
from schemas import decode
from tests.ledger_support import cli, committed_entries, flat
from tests.replay_support import bot_games

SEED = 32


def _recorded(root: Path) -> None:
    """Records two bot games of each game, the second of each with an event sent twice under a later
    seq (a finding of every engine), the games' events interleaved in the log."""
    games = bot_games(random.Random(SEED))
    init(root)
    with Ledger.open(root) as ledger:
        for step in range(max(map(len, games))):
            record_events(ledger, [played[step] for played in games if step < len(played)])
        ledger.checkpoint()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("streamed") / "ledger"
    _recorded(root)
    return root


def test_replay_reads_game_by_game_never_the_whole_log(recorded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32.1 (memory independent of the season): with the reader's whole-log reads made to fail,
    `replay` still replays every game, each decoded on its own, with the same findings in the same
    order as the whole-log replay."""
    whole = summarise(LogReader(recorded).events())
    assert whole.findings, "the repeated events must be reported"

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the whole log was read")

    decoded: list[set[str]] = []
    decode = schemas.decode_stored

    def counted(payloads: list[bytes]) -> list:
        events = decode(payloads)
        decoded.append({e.stream for e in events})
        return events

    monkeypatch.setattr(LogReader, "packed", refused)
    monkeypatch.setattr(LogReader, "checked_events", refused)
    monkeypatch.setattr(StoredEntries, "events", refused)
    monkeypatch.setattr(schemas, "decode_stored", counted)
    result = cli("replay", "--ledger", str(recorded), "--json")
    assert result.exit_code == 1, result.output
    out = json.loads(result.stdout)
    assert (out["games"], out["events"], out["moves"]) == (whole.games, whole.events, whole.moves) == (2 * len(GAMES), out["events"], out["moves"])
    assert [(f["stream"], f["seq"], f["code"]) for f in out["findings"]] == [(f.stream, f.seq, f.code) for f in whole.findings]
    assert len(decoded) == whole.games and all(len(streams) == 1 for streams in decoded), decoded


def test_a_changed_signed_entry_stops_the_streamed_replay(recorded: Path, tmp_path: Path) -> None:
    """Nothing unsigned counts (DESIGN.md): an entry of the signed range edited and re-framed with good
    CRCs, as an insider would, is refused when replay reads game by game: exit 1 naming the entry,
    and no totals are printed (the games folded before the check are not shown)."""
    root = tmp_path / "ledger"
    shutil.copytree(recorded, root)
    entries = [data for _, data in committed_entries(root)]
    at = len(entries) // 2
    edited = entries[at].replace(b'"ts":17', b'"ts":18', 1)
    assert edited != entries[at] and decode(edited).stream == decode(entries[at]).stream
    ((_, path),) = list_segments(root / SEGMENTS)
    path.write_bytes(frame_batch(0, [*entries[:at], edited, *entries[at + 1:]], True))
    result = cli("replay", "--ledger", str(root), "--json")
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert f"the signed range was changed: entry {at} differs" in flat(result.output), result.output


def test_an_index_that_ends_a_game_too_soon_is_refused(recorded: Path, tmp_path: Path) -> None:
    """Issue 32.1's guard (DESIGN.md "Nothing unsigned counts"): a game folded as soon as the index
    says its last entry is read would be folded short if the index lied; an index file cut by one
    record is refused naming the entry it left out, exit 1, no totals."""
    root = tmp_path / "ledger"
    shutil.copytree(recorded, root)
    game = "T1/r1/t0/checkers"
    path = stream_path(root, game)
    path.write_bytes(path.read_bytes()[:-RECORD.size])
    left_out = [index for index, data in committed_entries(root) if decode(data).stream == game][-1]
    result = cli("replay", "--ledger", str(root), "--json")
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert f"but entry {left_out} is of it" in flat(result.output), result.output
