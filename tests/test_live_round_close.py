"""A live round close costs its round's games, not its tournament's (issue 32.2).

The live audit keeps each game's small rows from one round close of its tournament to the next
(audit/live/rounds.py): a close folds again only the games touched since the last one and runs the
per-game check queries over them (audit/certification/scoped.py `answering`), the tournament checks
over every game's kept rows. Held here, over multi-round tournaments recorded by the simulator and
edited where a case needs it: the findings published are those of a live audit whose every close
reads and folds every game (as before), ids, entries and messages included, and those of the batch
audit; and the k-th close folds no game that ended before the (k−1)-th.

The cases: clean tournaments of each game; faults planted in round 1 or 2 (a misseating in round 2
whose check reads the standings after round 1); round 3's seating changed after it was recorded
(its check reads the standings after rounds 1 and 2, kept); an upheld appeal about a round-1 game
and the result override carrying it out, recorded before round 2 is seated (a game with a ruling
is read again, unfolded, at every later close); an extra round close in the middle of a Paohuzi board dealt differently at its two tables
(the table that ended before it is read again, unfolded, for the deal comparison)."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from audit.live.auditor import LiveAuditor
from audit.live.rounds import RoundRows
from audit.query.session import movement_ranking
from audit.simulator.tournament import TournamentPlan, simulate_tournament
from ledger import LogReader, init, record
from schemas import encode
from schemas.arbitration import AppealDecided, AppealFiled, Ref, Vote
from schemas.common import GameEnded, GameStarted, RoundClosed, RoundSeated, Ruling
from schemas.envelope import Event
from tests.test_live_audit import batch_findings, fed_in_batches

PLAYERS = {"checkers": 8, "junqi": 8, "paohuzi": 6}
Edit = Callable[[list[Event]], list[Event]]


class EveryGame(LiveAuditor):
    """The reference: every round close reads and folds every game of its tournament at once (the live audit before issue 32.2)."""

    close_share = 1 << 30

    def _closing(self, tournament: str, kept: RoundRows | None, touched: list[str] | None = None, boards: set[str] | None = None,
                 per_game: bool = False) -> Any:
        return super()._closing(tournament, None)


class OneGameAtATime(LiveAuditor):
    """Round closes in shares of one game (the per-game checks game by game, the tournament's once after)."""

    close_share = 1


def _published(finding: Any) -> tuple[Any, ...]:
    """A finding as published, but for its number: a close in shares publishes each share's
    per-game findings before the tournament's, so the same findings may come in another order."""
    return tuple(str(value) for field, value in msgspec.structs.asdict(finding).items() if field != "id")


def _tournament_stream(events: list[Event]) -> str:
    return next(e.stream for e in events if isinstance(e, RoundClosed))


def _insert(events: list[Event], at: int, event: Event) -> list[Event]:
    """Returns the events with `event` inserted before position `at`, the later events of its stream numbered on."""
    later = [msgspec.structs.replace(e, seq=e.seq + 1) if e.stream == event.stream else e for e in events[at:]]
    return [*events[:at], event, *later]


def _reseated(events: list[Event]) -> list[Event]:
    """Round 3's seating recorded with the seat-0 players of its first two tables swapped (the games play the seating drawn)."""
    at = next(i for i, e in enumerate(events) if isinstance(e, RoundSeated) and e.round == 3)
    seated = events[at]
    assert isinstance(seated, RoundSeated)
    tables = list(seated.tables)
    a, b = list(tables[0].seats), list(tables[1].seats)
    a[0], b[0] = msgspec.structs.replace(a[0], player=b[0].player), msgspec.structs.replace(b[0], player=a[0].player)
    tables[0], tables[1] = msgspec.structs.replace(tables[0], seats=a), msgspec.structs.replace(tables[1], seats=b)
    return [*events[:at], msgspec.structs.replace(seated, tables=tables), *events[at + 1:]]


def _overruled(events: list[Event], after: type[Event] = RoundClosed) -> list[Event]:
    """After round 1 closes, before round 2 is seated: an appeal about a round-1 game filed and upheld,
    and a result override of the game carrying the decision out (none signed). A later close that did
    not read the game's ruling would find the upheld appeal not carried out (audit.A05). `after`
    RoundSeated: recorded once round 2 is seated (the seating check then builds round 2's tables
    again without the ruling: such closes read every game)."""
    closed = next(i for i, e in enumerate(events) if isinstance(e, after) and (after is RoundClosed or getattr(e, "round", 0) == 2))
    tournament = _tournament_stream(events)
    game = next(e for e in events if isinstance(e, GameStarted) and e.round == 1)
    last = [e for e in events[:closed] if e.stream == game.stream][-1]
    assert isinstance(last, GameEnded)
    ts, seq = events[closed].ts, events[closed].seq
    filed = AppealFiled(stream=tournament, seq=seq + 1, ts=ts + 1, player=game.seats[0].holder, game=game.stream, grounds="the clock failed")
    decided = AppealDecided(stream=tournament, seq=seq + 2, ts=ts + 2, appeal=seq + 1, decision="upheld", text="upheld",
                            votes=[Vote(member=m, vote="uphold") for m in ("li", "wang", "zhao")])
    ruling = Ruling(stream=game.stream, seq=last.seq + 1, ts=ts + 3, corrects=last.seq, text="改判 override",
                    ruling="result_override", winners=[] if last.winners else [0], appeal=Ref(stream=tournament, seq=seq + 2))
    for at, event in enumerate((filed, decided, ruling), start=closed + 1):
        events = _insert(events, at, event)
    return events


def _late_clock(events: list[Event]) -> list[Event]:
    """A round-1 game's claim stamped a day after the tournament's last event: the competition's
    clock (`game_status`) is that game's at every later close, which then reads every game."""
    first = next(e for e in events if isinstance(e, GameStarted))
    at = next(i for i, e in enumerate(events) if e.stream == first.stream and isinstance(e, GameEnded))
    return [*events[:at], msgspec.structs.replace(events[at], ts=max(e.ts for e in events) + 86_400_000), *events[at + 1:]]


def _closed_mid_board(events: list[Event]) -> list[Event]:
    """An extra round close right after the first table of the board whose tables were dealt
    differently ends (the deal check of the next close compares it, not folded again, with the others)."""
    boards: dict[str, list[str]] = {}
    for e in events:
        if isinstance(e, GameStarted) and e.board:
            boards.setdefault(e.board, []).append(e.stream)
    dealt = {e.stream: encode(msgspec.structs.replace(e, stream="", ts=0)) for e in events if e.kind == "paohuzi.dealt"}
    first = next(games[0] for games in boards.values() if len({dealt[g] for g in games}) > 1)
    ended = next(i for i, e in enumerate(events) if e.stream == first and isinstance(e, GameEnded))
    tournament = _tournament_stream(events)
    seq = 1 + max(e.seq for e in events[:ended] if e.stream == tournament)
    return _insert(events, ended + 1, RoundClosed(stream=tournament, seq=seq, ts=events[ended].ts + 1, round=1, games=1))


CASES: dict[str, tuple[str, str | None, int, Edit | None]] = {
    "junqi-clean": ("junqi", None, 4, None),
    "paohuzi-clean": ("paohuzi", None, 3, None),
    "checkers-clean": ("checkers", None, 4, None),
    "junqi-wrong-seating": ("junqi", "wrong-seating", 4, None),
    "checkers-wrong-seating": ("checkers", "wrong-seating", 4, None),
    "junqi-illegal-move": ("junqi", "illegal-move", 3, None),
    "junqi-bad-move-time": ("junqi", "bad-move-time", 3, None),
    "checkers-false-result": ("checkers", "false-result", 3, None),
    "paohuzi-wrong-score": ("paohuzi", "wrong-score", 3, None),
    "junqi-reseated-round-3": ("junqi", None, 4, _reseated),
    "checkers-reseated-round-3": ("checkers", None, 4, _reseated),
    "checkers-overruled": ("checkers", None, 3, _overruled),
    "junqi-overruled-once-seated": ("junqi", None, 3, lambda events: _overruled(events, RoundSeated)),
    "junqi-late-clock": ("junqi", None, 3, _late_clock),
    "paohuzi-tampered-deal-mid-board-close": ("paohuzi", "tampered-deal", 2, _closed_mid_board),
}


@pytest.fixture(scope="module")
def ledgers() -> dict[str, Path]:
    """The ledgers of the cases, recorded once for the module, by case."""
    return {}


def recorded_case(cache: dict[str, Path], base: Path, case: str) -> Path:
    """Records (once) a case's tournament, edited as the case says; returns its ledger."""
    if case not in cache:
        game, fault, rounds, edit = CASES[case]
        base = base / "round-close"  # beside tests/test_live_audit.py's tournaments, named as these
        base.mkdir(exist_ok=True)
        root = base / case
        init(root)
        simulate_tournament(root, TournamentPlan(game=game, players=PLAYERS[game], rounds=rounds, games_per_round=2, seed=7,
                                                 inject=fault), movement_ranking)
        if edit is not None:
            events = edit(list(LogReader(root).events()))
            root = base / f"{case}-edited"
            init(root)
            record(root, [encode(e) for e in events])
        cache[case] = root
    return cache[case]


@pytest.mark.parametrize("case", list(CASES))
def test_round_closes_publish_what_closes_over_every_game_publish(ledgers: dict[str, Path], tmp_path_factory: pytest.TempPathFactory,
                                                                 case: str) -> None:
    """Every round close after a tournament's first reads only the games touched since the last (and
    the kept rows of the others), yet publishes the very findings, in the same order with the same
    numbers, entries and messages, that a close reading and folding every game publishes; both equal
    the batch replay's and audit's; a restart (`from_ledger`) publishes them again."""
    root = recorded_case(ledgers, tmp_path_factory.getbasetemp(), case)
    events = list(LogReader(root).events())
    reference = EveryGame()
    for entry, event in enumerate(events):
        reference.feed([(entry, event)])
    live, returned = fed_in_batches(events, random.Random(7))
    closes = sum(1 for e in events if isinstance(e, RoundClosed))
    assert closes >= 2 and len(live.rounds) == 1
    assert returned == live.findings == reference.findings, case
    tournament = _tournament_stream(events)  # a finding the audit gives no seq sits at the stream's last event when published

    def placed(found: set[tuple[str, str, int]]) -> set[tuple[str, str, int | None]]:
        return {(code, stream, None if stream == tournament else seq) for code, stream, seq in found}

    assert placed({(f.code, f.stream, f.seq) for f in live.findings}) == placed(batch_findings(root, events))
    assert LiveAuditor.from_ledger(root).findings == live.findings
    shared = OneGameAtATime()
    shared.feed(list(enumerate(events)))
    assert sorted(map(_published, shared.findings)) == sorted(map(_published, live.findings)), case
    assert live.findings or CASES[case][1] is None, "a planted fault is found"
    print(case, *(f.line() for f in live.findings if f.code.startswith(("audit.W", "audit.A", "paohuzi.D"))), sep="\n  ")


@pytest.mark.parametrize("case", ["junqi-clean", "checkers-wrong-seating", "paohuzi-tampered-deal-mid-board-close"])
def test_a_round_close_folds_only_the_games_touched_since_the_last(ledgers: dict[str, Path], tmp_path_factory: pytest.TempPathFactory,
                                                                   monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    """The k-th round close folds again exactly the finished games with an entry after the (k−1)-th
    (the first folds every game of the tournament): none that ended before the (k−1)-th close."""
    root = recorded_case(ledgers, tmp_path_factory.getbasetemp(), case)
    events = list(LogReader(root).events())
    closes: list[int] = []
    folded: list[set[str]] = []
    refold, close_round = LiveAuditor.refold, LiveAuditor._close_round

    def counted_refold(self: LiveAuditor, view: Any) -> Any:
        if len(folded) > len(closes) - 1 >= 0:
            folded[-1].add(view.events[0].stream)
        return refold(self, view)

    def counted_close(self: LiveAuditor, event: RoundClosed) -> None:
        closes.append(self.size - 1)
        folded.append(set())
        close_round(self, event)

    monkeypatch.setattr(LiveAuditor, "refold", counted_refold)
    monkeypatch.setattr(LiveAuditor, "_close_round", counted_close)
    live = LiveAuditor()
    for entry, event in enumerate(events):
        live.feed([(entry, event)])
    ended = {e.stream: entry for entry, e in enumerate(events) if isinstance(e, GameEnded)}
    entries: dict[str, list[int]] = {}
    for entry, e in enumerate(events):
        entries.setdefault(e.stream, []).append(entry)
    assert len(closes) >= 2 and folded[0] == {s for s in ended if ended[s] < closes[0]}
    for k in range(1, len(closes)):
        assert all(ended[s] > closes[k - 1] for s in folded[k]), (k, folded[k])
        since = {s for s in ended if ended[s] < closes[k] and any(closes[k - 1] < e < closes[k] for e in entries[s])}
        assert folded[k] == since, k
        print(f"{case}: close {k + 1} at entry {closes[k]} folded {len(folded[k])} games again "
              f"({len([s for s in ended if ended[s] < closes[k]])} ended by then)")


@pytest.mark.parametrize("case", ["junqi-wrong-seating", "checkers-overruled"])
def test_a_restarted_service_goes_on_from_the_rows_kept(ledgers: dict[str, Path], tmp_path_factory: pytest.TempPathFactory,
                                                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    """The rows kept at each round close are kept in `derived/live/` with the service's state: the
    service stopped in the middle of round 3 and restarted folds again at round 3's close only the
    games touched since round 2's, and publishes the findings of one audit fed the whole log."""
    from tests.test_serve_open import Service, recorded, reference

    events = list(LogReader(recorded_case(ledgers, tmp_path_factory.getbasetemp(), case)).events())
    closes = [i for i, e in enumerate(events) if isinstance(e, RoundClosed)]
    cut = (closes[1] + closes[2]) // 2
    first = Service(recorded(tmp_path / "l", events[:closes[0] // 2]))
    first.record(events[closes[0] // 2:cut])
    first.stop()
    second = Service(tmp_path / "l")
    assert second.opened.resumed and set(second.auditor.rounds) == {_tournament_stream(events)}
    folded: set[str] = set()
    refold = LiveAuditor.refold

    def counted_refold(self: LiveAuditor, view: Any) -> Any:
        folded.add(view.events[0].stream)
        return refold(self, view)

    monkeypatch.setattr(LiveAuditor, "refold", counted_refold)
    second.record(events[cut:closes[2] + 1])
    ended = {e.stream: entry for entry, e in enumerate(events) if isinstance(e, GameEnded)}
    assert folded and all(ended[s] > closes[1] for s in folded), folded
    second.record(events[closes[2] + 1:])
    second.stop()
    assert second.auditor.findings == reference(events)
