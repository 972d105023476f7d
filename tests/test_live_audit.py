"""The live audit (issue 14, item 5): games folded by their engines' own folds as events arrive give
exactly the findings of the batch replay and the audit, whatever the batches; a planted illegal move
and a false `game.ended` claim are found when their event is fed; a clean round finds nothing;
finding numbers survive a restart; each event is folded once. `matchledger watch` against a small
Server-Sent Events server: the finding format, resuming with Last-Event-ID, Ctrl-C.

Tournaments are small by default: MATCHLEDGER_LIVE_ROUNDS plays more rounds, MATCHLEDGER_LIVE_SEED
fixes the seed of the batch splits (printed)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import msgspec
import pytest

from audit.certification.certify import certify
from audit.live.auditor import FeedError, LiveAuditor, LiveFinding
from audit.live.watch import _Link, messages
from audit.presentation.render import finding_said
from audit.query.projection import project
from audit.query.session import movement_ranking
from audit.simulator import faults
from audit.simulator.tournament import FAULTS, TournamentPlan, simulate_tournament
from ledger import LedgerCorrupt, LogReader, init
from replay.protocol import Step
from replay.registry import GAMES, SEATS, engine
from replay.run import replay_all
from schemas.common import GameEnded, GameStarted
from schemas.envelope import Event, SeatHolder
from tests.ledger_support import cli

ROUNDS = int(os.environ.get("MATCHLEDGER_LIVE_ROUNDS", "1"))
SEED = int(os.environ.get("MATCHLEDGER_LIVE_SEED", random.randrange(2**32)))
PLAYERS = {"checkers": 4, "junqi": 8, "paohuzi": 6}
"""Two tables of each game: the smallest field every fault can be planted in."""


def _cases() -> Iterator[tuple[str, str | None]]:
    for game in GAMES:
        yield game, None
        for fault in FAULTS:
            if fault != "bad-byte" and (fault != "tampered-deal" or game == "paohuzi"):
                yield game, fault


@pytest.fixture(scope="module")
def tournaments(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str | None], Path]:
    """Simulated tournaments, recorded once for the module, by (game, fault)."""
    return {}


def simulated(cache: dict[tuple[str, str | None], Path], base: Path, game: str, fault: str | None) -> Path:
    """Records (once) a small tournament of `game` with `fault` planted; returns its ledger."""
    if (game, fault) not in cache:
        root = base / f"{game}-{fault or 'clean'}"
        init(root)
        rounds = max(ROUNDS, 2) if fault == "wrong-seating" else ROUNDS
        simulate_tournament(root, TournamentPlan(game=game, players=PLAYERS[game], rounds=rounds, games_per_round=1, seed=3,
                                                 inject=fault), movement_ranking)
        cache[game, fault] = root
    return cache[game, fault]


def batch_findings(root: Path, events: list[Event]) -> set[tuple[str, str, int]]:
    """The findings of the batch replay and of the audit, placed as the live audit places them (a
    finding the audit gives no seq sits at its stream's last event)."""
    last = {e.stream: e.seq for e in events}
    found = {(f.code, f.stream, f.seq) for r in replay_all(events) for f in r.findings}
    report = certify(root)
    assert report.log.ok
    for row in report.findings + report.warnings:
        found.add((row["code"], row["stream"], row["seq"] if row["seq"] is not None else last[row["stream"]]))
    return found


def fed_in_batches(events: list[Event], rng: random.Random) -> tuple[LiveAuditor, list[LiveFinding]]:
    """Feeds a log's entries to a live audit in batches of random sizes; returns it and what feed returned."""
    live = LiveAuditor()
    returned: list[LiveFinding] = []
    at = 0
    while at < len(events):
        n = rng.choice((1, 1, 2, 7, 50, 400))
        returned += live.feed(list(enumerate(events[at:at + n], start=at)))
        at += n
    return live, returned


@pytest.mark.parametrize(("game", "fault"), list(_cases()), ids=lambda x: x or "clean")
def test_live_audit_equals_batch_replay_and_audit(tournaments: dict, tmp_path_factory: pytest.TempPathFactory,
                                                  game: str, fault: str | None) -> None:
    """DESIGN.md replay/ (replay is a fold) and issue 14 item 5: folding each game as its events
    arrive, in random batches, finds exactly what the batch replay and the audit find (codes,
    streams, seqs) and numbers them 1, 2, 3 …; a clean tournament finds nothing, a planted fault is
    found; each game event is folded once."""
    root = simulated(tournaments, tmp_path_factory.getbasetemp(), game, fault)
    events = list(LogReader(root).events())
    print(f"{game} {fault}: batch splits seeded with MATCHLEDGER_LIVE_SEED={SEED}")
    live, returned = fed_in_batches(events, random.Random(SEED))
    assert returned == live.findings and [f.id for f in returned] == list(range(1, len(returned) + 1))
    assert {(f.code, f.stream, f.seq) for f in returned} == batch_findings(root, events)
    assert (returned == []) == (fault is None)
    assert live.steps_folded == sum(1 for e in events if e.stream in game_streams(events))


@pytest.mark.parametrize(("game", "fault"), [("junqi", "illegal-move"), ("checkers", "wrong-seating"), ("paohuzi", "tampered-deal")])
def test_restart_numbers_findings_identically(tournaments: dict, tmp_path_factory: pytest.TempPathFactory,
                                              game: str, fault: str) -> None:
    """Ids are deterministic from the log: a service restarted on the ledger (`from_ledger`) publishes
    the very findings, numbers, entries and messages included, that feeding the entries gave, the
    engines' and the round checks' alike; an entry delivered again is skipped."""
    root = simulated(tournaments, tmp_path_factory.getbasetemp(), game, fault)
    events = list(LogReader(root).events())
    half = len(events) // 2
    live = LiveAuditor()
    live.feed(list(enumerate(events[:half])))
    fed = live.feed(list(enumerate(events[half:], start=half)))
    restarted = LiveAuditor.from_ledger(root)
    assert restarted.findings == live.findings and fed == live.findings[len(live.findings) - len(fed):]
    assert restarted.feed([(len(events) - 1, events[-1])]) == [] and restarted.size == len(events)


def test_round_checks_read_the_tables_of_the_batch_projection(tournaments: dict, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The round checks run on a projection built from the games' folds (`project_replayed`: the
    games under way folded live, the finished ones folded again from their entries, read back) and
    the streams that are not games: at the end of the log its every table holds exactly the rows of
    the batch projection (`project`, which replays every game)."""
    root = simulated(tournaments, tmp_path_factory.getbasetemp(), "junqi", "illegal-move")
    live = LiveAuditor.from_ledger(root)
    [tournament] = live.tournaments
    _, projection = live.round_projection(tournament)
    mine, theirs = projection.tables(), project(LogReader(root).packed()).tables()
    for name in theirs:
        assert sorted(map(repr, mine[name].to_pylist())) == sorted(map(repr, theirs[name].to_pylist())), name
    events = list(LogReader(root).events())
    assert theirs["findings"].num_rows and theirs["steps"].num_rows == sum(1 for e in events if e.stream in game_streams(events))


def game_streams(events: list[Event]) -> set[str]:
    """Returns the streams of the games a log holds."""
    return {e.stream for e in events if isinstance(e, GameStarted)}


def test_live_audit_refuses_a_damaged_log(tmp_path: Path) -> None:
    """The `bad-byte` fault: a flipped byte of a checkpointed entry stops the live audit's start-up
    with the ledger's error (it never folds damaged bytes), while the audit reports it as ledger.V01."""
    root = tmp_path / "l"
    init(root)
    simulate_tournament(root, TournamentPlan(game="checkers", players=4, rounds=1, games_per_round=1, seed=3, inject="bad-byte"),
                        movement_ranking)
    with pytest.raises(LedgerCorrupt):
        LiveAuditor.from_ledger(root)
    assert [f["code"] for f in certify(root).findings] == ["ledger.V01"]


def bot_game(game: str, seed: int) -> list[Event]:
    seats = [SeatHolder(seat=s, player=f"P{s}") for s in range(SEATS[game])]
    start = GameStarted(stream=f"live-{game}", seq=0, ts=1_764_000_000_000, profile=engine(game).profile_type(),  # type: ignore[arg-type]
                        seats=seats, first=0)
    return engine(game).bot_game(start, random.Random(seed))


@pytest.mark.parametrize("game", GAMES)
def test_planted_illegal_move_found_when_it_is_fed(game: str) -> None:
    """Issue 14 item 5 (a planted illegal move appears live with its rule code): an out-of-turn move
    (checkers 第五条 E_NOT_YOUR_TURN, junqi 第七条 M02, paohuzi T01/P01) is the first finding, returned
    by the feed of its own event, with the seat that moved and the player holding it."""
    events, _ = faults.plant("illegal-move", bot_game(game, 7), random.Random(7))
    planted = _planted_at(events)
    live = LiveAuditor()
    for entry, event in enumerate(events):
        found = live.feed([(entry, event)])
        if entry < planted:
            assert found == [], f"a finding before the planted move: {found}"
        elif entry == planted:
            assert found, "the planted move was not found when it was fed"
            first = found[0]
            assert (first.game, first.stream, first.seq, first.seat) == (game, event.stream, event.seq, event.seat)
            assert first.player == f"P{event.seat}" and first.code in ILLEGAL_CODES[game] and first.article
            print(first.line())
            return


ILLEGAL_CODES = {"checkers": {"checkers.M01"}, "junqi": {"junqi.M02"}, "paohuzi": {"paohuzi.T01", "paohuzi.P01", "paohuzi.F02"}}


def _planted_at(events: list[Event]) -> int:
    """Returns where `faults.plant` put its out-of-turn copy: the move stamped with the time of the event before it."""
    moves = [i for i, e in enumerate(events) if e.kind in faults.MOVE_KINDS and e.seat is not None]
    return next(i for i in moves if i > 0 and events[i].ts == events[i - 1].ts and _is_copy(events, i))


def _is_copy(events: list[Event], i: int) -> bool:
    later = events[i + 1]
    fields = [f for f in events[i].__struct_fields__ if f not in ("seq", "seat", "ts")]
    return type(later) is type(events[i]) and all(getattr(later, f) == getattr(events[i], f) for f in fields)


FALSE_CLAIM = {"checkers": "checkers.E01", "junqi": "junqi.E02", "paohuzi": "paohuzi.E01"}


@pytest.mark.parametrize("game", GAMES)
def test_false_game_ended_claim_found_when_it_is_fed(game: str) -> None:
    """Issue 14 item 5 (a false `game.ended` claim appears live with its rule code): the claim of
    other winners and reversed points is found by the feed of the claim itself, nothing before it."""
    events, _ = faults.plant("false-result", bot_game(game, 11), random.Random(11))
    assert isinstance(events[-1], GameEnded)
    live = LiveAuditor()
    assert live.feed(list(enumerate(events[:-1]))) == []
    found = live.feed([(len(events) - 1, events[-1])])
    assert found and {f.code for f in found} <= {FALSE_CLAIM[game], "paohuzi.E02"} and FALSE_CLAIM[game] in {f.code for f in found}
    assert all(f.seq == events[-1].seq and f.entry == len(events) - 1 for f in found)
    print(*(f.line() for f in found), sep="\n")


def test_feed_folds_each_event_once(tournaments: dict, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The live cost is per event: fed one entry at a time, the engines take in exactly one more event
    for each game event and none for a tournament event, so the n-th event never refolds the n−1
    before it (a replay from scratch per event would take in n(n+1)/2)."""
    events = list(LogReader(simulated(tournaments, tmp_path_factory.getbasetemp(), "junqi", None)).events())
    live = LiveAuditor()
    for entry, event in enumerate(events):
        before = live.steps_folded
        live.feed([(entry, event)])
        assert live.steps_folded - before == (1 if event.stream in game_streams(events) else 0)


def test_a_fold_that_reads_ahead_is_reported_not_waited_for() -> None:
    """A fold that asks for a second event before yielding the first one's step cannot run live: the
    inbox refuses (FoldReadAhead) and the game's finding says the engine stopped (audit.E01)."""
    events = bot_game("checkers", 3)
    live = LiveAuditor()
    live.feed([(0, events[0])])
    game = live.games[events[0].stream]

    def greedy(inbox: Iterator[Event]) -> Iterator[Any]:
        while True:
            pair = (next(inbox), next(inbox))
            yield Step(event=pair[0], state=None, facts={})

    game.fold.steps = greedy(game.inbox)
    [found] = live.feed([(1, events[1])])
    assert found.code == "audit.E01" and "asked for an event that has not arrived" in found.message
    assert live.feed([(2, events[2])]) == []


def test_orphan_stream_found_at_its_first_event() -> None:
    """As in the audit (audit.G01): a stream that opens with neither game.started nor
    tournament.opened is a finding at its first event; its later events add none."""
    events = bot_game("checkers", 3)
    orphan = [msgspec.structs.replace(e, stream="lost/g1", seq=e.seq - 1) for e in events[1:4]]
    live = LiveAuditor()
    [found] = live.feed(list(enumerate(orphan)))
    assert (found.code, found.stream, found.seq, found.entry, found.game) == ("audit.G01", "lost/g1", 0, 0, "tournament")
    assert live.steps_folded == 0


def test_round_checks_that_fail_are_a_finding_not_a_crash(tournaments: dict, tmp_path_factory: pytest.TempPathFactory,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A round close whose checks raise is published as audit.E02 at the round close; the feed goes on."""
    events = list(LogReader(simulated(tournaments, tmp_path_factory.getbasetemp(), "junqi", None)).events())

    def broken(*args: object) -> list[dict[str, Any]]:
        raise RuntimeError("the database is gone")

    monkeypatch.setattr("audit.certification.certify.collect_findings", broken)
    found = LiveAuditor().feed(list(enumerate(events)))
    closes = [e for e in events if e.kind == "tournament.round_closed"]
    assert [(f.code, f.seq) for f in found] == [("audit.E02", e.seq) for e in closes]
    assert "RuntimeError: the database is gone" in found[0].message


def test_feed_takes_entries_in_log_order() -> None:
    """The live audit numbers findings from the log's order: a gap is refused, a repeated entry skipped."""
    events = bot_game("checkers", 3)
    live = LiveAuditor()
    live.feed(list(enumerate(events[:5])))
    live.feed([(3, events[3]), (4, events[4])])
    assert live.steps_folded == 5
    with pytest.raises(FeedError, match="entry 6 fed where entry 5 is the next of the log"):
        live.feed([(6, events[6])])


def test_since_pages_findings_by_id(tournaments: dict, tmp_path_factory: pytest.TempPathFactory) -> None:
    """`since(n)` returns the findings numbered after n, at most `limit`."""
    live = LiveAuditor.from_ledger(simulated(tournaments, tmp_path_factory.getbasetemp(), "paohuzi", "tampered-deal"))
    assert live.findings
    assert live.since(0) == live.findings and live.since(len(live.findings)) == []
    assert [f.id for f in live.since(0, limit=1)] == [1]


# -- matchledger watch -----------------------------------------------------------------------------

def _finding(n: int) -> LiveFinding:
    return LiveFinding(id=n, entry=10 * n, game="junqi", stream="cup/r1/t1/g1", seq=n, seat=n % 4, player=f"P00{n}",
                       code="junqi.M02", article="第七条", message=f"illegal move number {n}", severity="error")


class _LiveServer(BaseHTTPRequestHandler):
    """A tiny /live: two findings per connection after Last-Event-ID, then the connection drops; once
    every finding is sent, 410 Gone when `ends` (so that a watch stops), else empty streams."""

    findings = [_finding(n) for n in range(1, 6)]
    resumed: list[str | None] = []
    ends = True

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        last = self.headers.get("Last-Event-ID")
        self.resumed.append(last)
        if self.path != "/live" or (self.ends and int(last or 0) >= len(self.findings)):
            self.send_error(404 if self.path != "/live" else 410, "no such stream" if self.path != "/live" else "the event is over")
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(b"retry: 50\n: keepalive\n\n")
        for f in [f for f in self.findings if f.id > int(last or 0)][:2]:
            self.wfile.write(b"id: %d\nevent: finding\ndata: %s\n\n" % (f.id, msgspec.json.encode(f)))
        self.wfile.flush()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def live_server() -> Iterator[str]:
    _LiveServer.resumed, _LiveServer.ends = [], True
    server = ThreadingHTTPServer(("127.0.0.1", 0), _LiveServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_watch_prints_each_finding_once_resuming_after_drops(live_server: str) -> None:
    """`matchledger watch --since 1` prints findings 2…5 in the one finding format, each once, though
    the server drops the connection after every two: each reconnection sends the last id printed as
    Last-Event-ID. A refusal (410 here, once the event is over) ends it with its status, exit 1."""
    result = cli("watch", "--url", live_server, "--since", "1")
    lines = result.stdout.splitlines()
    assert lines == [finding_said(msgspec.structs.asdict(_finding(n))) for n in range(2, 6)]
    assert lines[0] == ("违规 error junqi.M02 四家布阵完毕后依次行棋 (第七条, 竞技四国军棋竞赛规则): cup/r1/t1/g1 seq 2 seat 2 N/P002: "
                        "illegal move number 2")
    assert _LiveServer.resumed == ["1", "3", "5"]
    assert result.exit_code == 1 and "410" in result.stderr and "reconnecting in 0.05 s" in result.stderr


def test_watch_json_prints_one_finding_per_line(live_server: str) -> None:
    result = cli("watch", "--url", live_server + "/live", "--json")
    assert [msgspec.json.decode(line, type=LiveFinding) for line in result.stdout.splitlines()] == _LiveServer.findings


def test_watch_names_a_refusal(live_server: str) -> None:
    """A service that refuses the stream (404 here) is an error on stderr, exit 1, not a retry loop."""
    result = cli("watch", "--url", live_server + "/nothing")
    assert result.exit_code == 1 and "404" in result.stderr and "/nothing/live" in result.stderr
    assert len(_LiveServer.resumed) == 1


def test_watch_stops_cleanly_on_ctrl_c(live_server: str) -> None:
    """Ctrl-C (SIGINT) ends a watch with exit 130, no traceback, and the id to resume from."""
    _LiveServer.ends = False
    # as from a terminal: a job a non-interactive shell starts in the background (a CI script's `cmd &`)
    # inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler
    proc = subprocess.Popen([sys.executable, "-c", "from audit.cli import main; main()", "watch", "--url", live_server],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[1],
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdout is not None
    out = [proc.stdout.readline().rstrip("\n") for _ in range(5)]
    deadline = time.monotonic() + 30
    while "5" not in _LiveServer.resumed and time.monotonic() < deadline:  # idle after the last finding
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert out == [finding_said(msgspec.structs.asdict(f)) for f in _LiveServer.findings]
    assert proc.returncode == 130 and "Traceback" not in err and "stopped after finding 5 (resume with --since 5)" in err


def test_event_stream_parsing() -> None:
    """WHATWG Server-sent events: data lines joined, comments skipped, `retry:` sets the delay, a
    message without data dispatches nothing."""
    link = _Link(last=0)
    lines = [": keepalive", "", "retry: 250", "event: finding", "id: 7", "data: a", "data:b", "", "event: other", "", "data: c", ""]
    got = [(m.event, m.id, m.data) for m in messages(iter(lines), link)]
    assert got == [("finding", "7", "a\nb"), ("message", "7", "c")] and link.retry == 0.25
