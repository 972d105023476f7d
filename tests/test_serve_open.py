"""The live service opens without reading the season (issue 14, live audit at start-up): what it
published is kept in the ledger (`derived/live/`), and a restart reads only the games still under
way (through the stream index) and the entries recorded since.

The service's own path is driven here without HTTP (`open_auditor`, `catch_up`, `feed`, the state
written at stop), against the reference of a live audit fed the whole log in memory: a restart in the
middle of a tournament gives the very findings, numbers and all; an open game's fold goes on after a
restart (a planted illegal move is found); the entries read at start-up exclude the closed games;
a missing, torn or foreign findings file is rebuilt. Ledgers are small tournaments (two rounds)."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import msgspec
import pytest

from audit.live.auditor import LiveAuditor, LiveFinding
from audit.live.store import FINDINGS, GAMES, KEYS, ROUNDS, STATE, LiveStore, Opened, open_auditor
from audit.query.session import movement_ranking
from audit.simulator import faults
from audit.simulator.client import Client
from audit.simulator.simulate import record_events
from audit.simulator.tournament import TournamentPlan, simulate_tournament
from ledger import Ledger, LogReader, init
from ledger.derived import indexed_size
from schemas.common import GameEnded, GameStarted, RoundClosed
from schemas.envelope import Event
from tests.serve_support import Server, get, make_source
from tests.test_live_audit import ILLEGAL_CODES, _planted_at, bot_game

PLAYERS = {"checkers": 4, "junqi": 8}


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], list[Event]]:
    """The events of small two-round tournaments with a fault planted, recorded once, by (game, fault)."""
    found = {}
    for game, fault in (("junqi", "illegal-move"), ("checkers", "wrong-seating")):
        root = tmp_path_factory.mktemp(f"{game}-{fault}") / "l"
        init(root)
        simulate_tournament(root, TournamentPlan(game=game, players=PLAYERS[game], rounds=2, games_per_round=1, seed=5,
                                                 inject=fault), movement_ranking)
        found[game, fault] = list(LogReader(root).events())
    return found


def reference(events: list[Event]) -> list[LiveFinding]:
    """The findings of a live audit fed the whole log in memory, entry by entry."""
    live = LiveAuditor()
    for entry, event in enumerate(events):
        live.feed([(entry, event)])
    return live.findings


class Service:
    """The service's live audit over a ledger, as `LiveHub` runs it: opened (from the kept files, or
    rebuilt), caught up, fed each commit, its state written when it stops."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.auditor, self.opened = open_auditor(root, size(root))
        self.read_at_open = self.auditor.log.entries_read
        self.auditor.catch_up(size(root))

    def record(self, events: list[Event], chunk: int = 7) -> list[LiveFinding]:
        """Records events a few at a time, feeding each commit to the audit; returns what it published."""
        found = []
        for at in range(0, len(events), chunk):
            base = size(self.root)
            with Ledger.open(self.root) as ledger:
                record_events(ledger, events[at:at + chunk])
                ledger.checkpoint()
            found += self.auditor.feed(list(enumerate(events[at:at + chunk], start=base)))
        return found

    def stop(self) -> None:
        assert isinstance(self.auditor.book, LiveStore)  # open_auditor's book: the kept files
        self.auditor.book.save(self.auditor)


def size(root: Path) -> int:
    with Ledger.open(root) as ledger:
        return ledger.size


def recorded(root: Path, events: list[Event]) -> Path:
    init(root)
    with Ledger.open(root) as ledger:
        record_events(ledger, events)
        ledger.checkpoint()
    return root


def open_at(events: list[Event]) -> tuple[set[str], set[str]]:
    """Returns the game streams under way after these events, and the streams that are not games."""
    started = {e.stream for e in events if isinstance(e, GameStarted)}
    ended = {e.stream for e in events if isinstance(e, GameEnded)}
    return started - ended, {e.stream for e in events} - started


@pytest.mark.parametrize(("game", "fault"), [("junqi", "illegal-move"), ("checkers", "wrong-seating")])
def test_restart_mid_tournament_gives_the_same_findings_and_numbers(sources: dict, tmp_path: Path, game: str, fault: str) -> None:
    """Issue 14 item 5 and the charter (opening must not grow with the season): the service stopped
    in round 2 with a game under way and restarted publishes exactly the findings, ids, entries,
    seats and messages included, of one audit fed the whole log, the engines' and the round checks'
    alike; at the restart it reads only the entries of the games under way."""
    events = sources[game, fault]
    closes = [i for i, e in enumerate(events) if isinstance(e, RoundClosed)]
    assert len(closes) == 2
    cut = next(i for i in range((closes[0] + closes[1]) // 2, closes[1])
               if open_at(events[:i])[0] and any(isinstance(e, GameEnded) for e in events[closes[0]:i]))
    first = Service(recorded(tmp_path / "l", events[:closes[0] // 2]))
    assert not first.opened.resumed and first.opened.reason == "no state was kept yet"
    first.record(events[closes[0] // 2:cut])
    first.stop()

    second = Service(tmp_path / "l")
    games, others = open_at(events[:cut])
    assert second.opened.resumed and second.opened.size == cut and set(second.auditor.games) == games
    assert second.read_at_open == sum(1 for e in events[:cut] if e.stream in games) > 0
    closed = sum(1 for e in events[:cut] if e.stream not in games | others)
    assert closed > 0
    print(f"{game}: restart at entry {cut} read {second.read_at_open} entries, not the {closed} of the closed games")
    second.record(events[cut:])
    second.stop()
    want = reference(events)
    assert want and second.auditor.findings == want

    third = Service(tmp_path / "l")  # the end of the tournament: every game is closed
    assert third.opened.resumed and not third.auditor.games and third.auditor.since(0, 10**6) == want
    assert third.read_at_open == 0


@pytest.mark.parametrize("game", ["junqi", "checkers"])
def test_open_game_fold_goes_on_after_restart_and_finds_a_planted_move(tmp_path: Path, game: str) -> None:
    """An open game's fold is taken up again at a restart from its entries (read through the stream
    index): the illegal move planted after the restart (an out-of-turn copy: junqi 第七条 M02,
    checkers 第五条 M01) is found by the feed of its own event, numbered as one audit of the whole
    log numbers it, and nothing is found before it."""
    events, _ = faults.plant("illegal-move", bot_game(game, 7), random.Random(7))
    planted = _planted_at(events)
    first = Service(recorded(tmp_path / "l", events[:planted // 2]))
    first.record(events[planted // 2:planted - 2])
    first.stop()
    second = Service(tmp_path / "l")
    assert second.opened.resumed and list(second.auditor.games) == [events[0].stream]
    assert second.read_at_open == planted - 2 and second.auditor.findings == []
    found = second.record(events[planted - 2:], chunk=1)
    assert found[0].entry == planted and found[0].code in ILLEGAL_CODES[game] and found[0].seat == events[planted].seat
    assert second.auditor.findings == reference(events)


def damage(live: Path, how: str) -> None:
    """Damages the kept files of a stopped service one way."""
    if how == "findings missing":
        (live / FINDINGS).unlink()
    elif how == "findings torn":
        (live / FINDINGS).write_bytes((live / FINDINGS).read_bytes()[:-9])
    elif how == "findings edited":
        edited = bytearray((live / FINDINGS).read_bytes())
        edited[len(edited) // 2] ^= 0x01
        (live / FINDINGS).write_bytes(bytes(edited))
    elif how == "state missing":
        (live / STATE).unlink()
    elif how == "state torn":
        (live / STATE).write_bytes((live / STATE).read_bytes()[:40])
    elif how == "state of another log":
        text = (live / STATE).read_text()
        root = text.split('"root":"')[1][:64]
        (live / STATE).write_text(text.replace(root, "0" * 64))
    elif how == "keys torn":
        (live / KEYS).write_bytes((live / KEYS).read_bytes()[:-3])
    elif how == "games missing":
        (live / GAMES).unlink()
    elif how in ("keys edited", "games edited"):  # same length: only the hash the state signs tells
        name = KEYS if how == "keys edited" else GAMES
        edited = bytearray((live / name).read_bytes())
        at = edited.index(b'"') + 1
        edited[at] = ord("X") if edited[at] != ord("X") else ord("Y")
        (live / name).write_bytes(bytes(edited))
    elif how == "findings forged, state re-hashed":  # someone who can write the files but holds no key
        import hashlib

        findings = (live / FINDINGS).read_bytes()
        forged = findings.replace(b'"severity":"error"', b'"severity":"warning"', 1)  # an error played down
        assert forged != findings
        (live / FINDINGS).write_bytes(forged)
        data, _, note = (live / STATE).read_bytes().partition(b"\n")
        state = json.loads(data)
        state.update(findings_bytes=len(forged), findings_sha256=hashlib.sha256(forged).hexdigest())
        (live / STATE).write_bytes(json.dumps(state, separators=(",", ":")).encode() + b"\n" + note)
    elif how == "state signed by another key":
        from audit.live.store import SIGNED_FORMAT
        from audit.query.signed_state import sign_state
        from ledger import Signer, load_verifier

        data, _, _ = (live / STATE).read_bytes().partition(b"\n")
        other = Signer.generate(load_verifier(live.parent.parent).name)  # the log's name, another key
        (live / STATE).write_bytes(sign_state(other, SIGNED_FORMAT, data))
    elif how in ("rounds missing", "rounds edited"):  # a tournament's rows kept for its next round close
        [rows] = live.glob(f"{ROUNDS}-*")
        if how == "rounds missing":
            rows.unlink()
        else:
            edited = bytearray(rows.read_bytes())
            edited[len(edited) // 2] ^= 0x01
            rows.write_bytes(bytes(edited))
    elif how == "published after the state":  # a crash between writing findings and the state: not a damage
        (live / FINDINGS).write_bytes((live / FINDINGS).read_bytes() + b'{"id": 99, "half a line')


@pytest.mark.parametrize("how", ["findings missing", "findings torn", "findings edited", "state missing", "state torn",
                                 "state of another log", "keys torn", "games missing", "keys edited", "games edited",
                                 "findings forged, state re-hashed", "state signed by another key", "rounds missing", "rounds edited",
                                 "published after the state"])
def test_missing_torn_or_foreign_files_are_rebuilt(sources: dict, tmp_path: Path, how: str) -> None:
    """The kept files are derived data: whatever of them is missing, torn, edited or made from
    another log is detected at the restart (the reason is logged) and rebuilt from the log, to the
    same findings under the same numbers; what was published after the last state is cut back and
    published again. The state is signed by the log's key: files forged with their hashes made to
    agree, by someone who holds no key, are rebuilt too."""
    events = sources["checkers", "wrong-seating"]
    first = Service(recorded(tmp_path / "l", events[:len(events) // 3]))
    first.record(events[len(events) // 3:])
    first.stop()
    want = reference(events)
    live = tmp_path / "l" / "derived" / "live"
    names = {p.name for p in live.iterdir()}
    assert {n for n in names if not n.startswith(f"{ROUNDS}-")} == {FINDINGS, KEYS, GAMES, STATE} and (live / KEYS).stat().st_size
    assert len(names) == 5  # one tournament's rows kept for its next round close (audit/live/rounds.py)
    damage(live, how)
    again = Service(tmp_path / "l")
    rebuilt = how != "published after the state"
    assert again.opened.resumed is not rebuilt and (again.opened.reason is not None) is rebuilt
    print(f"{how}: {again.opened.reason or 'resumed'}")
    assert again.auditor.findings == want
    again.stop()
    assert Service(tmp_path / "l").opened == Opened(True, None, len(events), len(want), 0, 0)


def test_files_kept_by_other_code_are_rebuilt(sources: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine changed without a new version number (a fix deployed from a source tree): the
    kept files name the code that derived them (audit.query.signed_state.code_fingerprint), so the restart
    rebuilds them with the new engine instead of serving the old one's findings."""
    import audit.live.store

    events = sources["checkers", "wrong-seating"]
    Service(recorded(tmp_path / "l", events)).stop()
    monkeypatch.setattr(audit.live.store, "code_fingerprint", lambda: "0.1.0+a-fixed-engine")
    again = Service(tmp_path / "l")
    assert not again.opened.resumed and "other code" in (again.opened.reason or "")
    assert again.auditor.findings == reference(events)


def test_findings_are_read_back_by_id_from_the_file(sources: dict, tmp_path: Path) -> None:
    """`since(n, limit)` pages the kept findings by id, as `GET /findings?since=N` and `/live` read them."""
    events = sources["checkers", "wrong-seating"]
    service = Service(recorded(tmp_path / "l", events))
    service.stop()
    book = service.auditor.book
    want = reference(events)
    assert isinstance(book, LiveStore) and len(book) == len(want) >= 1
    assert book.since(0, 1) == want[:1] and book.since(len(book), 5) == [] and book.since(0, 10**6) == want


def test_served_restart_reads_only_the_open_game_and_finds_a_move_planted_after(tmp_path: Path) -> None:
    """Issue 14 (the real `matchledger serve`, signed batches): a finished game and a game under
    way are sent, the service is stopped and started again; its `live` log line says it resumed from
    its kept files, reading the open game's entries and nothing of the finished one; the illegal
    move planted after the restart (checkers 第五条, out of turn) is found live with the very
    numbers one audit of the whole log gives, and `/findings` lists the same after a third start."""
    root = tmp_path / "L"
    init(root, "serve.test/log")
    venue = make_source(tmp_path, root, "venue")
    finished = bot_game("junqi", 3)
    events, _ = faults.plant("illegal-move", bot_game("checkers", 7), random.Random(7))
    planted = _planted_at(events)

    def send(url: str, batches: list[list[Event]]) -> None:
        async def run() -> None:
            async with Client(url, venue) as client:
                for batch in batches:
                    await client.send(batch)
        asyncio.run(run())

    with Server(root) as server:
        send(server.url, [finished[i:i + 40] for i in range(0, len(finished), 40)] + [events[:planted - 2]])
    with Server(root) as server:
        line = server.wait_for(lambda r: r.get("at") == "live", 60)
        assert line["resumed"] and line["open_games"] == 1 and line["entries_read"] == planted - 2, line
        send(server.url, [events[i:i + 1] for i in range(planted - 2, len(events))])
        for _ in range(200):
            listed = json.loads(get(server.url, "/findings?since=0")[1])["findings"]
            if listed:
                break
            asyncio.run(asyncio.sleep(0.05))
    log = list(LogReader(root).events())
    want = [msgspec.to_builtins(f) for f in reference(log)]
    assert want and want[0]["code"] in ILLEGAL_CODES["checkers"] and want[0]["stream"] == events[0].stream
    assert listed == want[:len(listed)]
    with Server(root) as server:
        assert json.loads(get(server.url, "/findings?since=0")[1])["findings"] == want


def test_a_stream_is_read_whole_while_the_index_on_disk_lags(sources: dict, tmp_path: Path) -> None:
    """The service flushes the stream index every few seconds (checkpoints without the index
    between): a stream read back for a round close or a finished game's later event is its entries
    on disk plus those fed since the index covered them, every one, in seq order."""
    from audit.live.auditor import LedgerLog

    events = sources["checkers", "wrong-seating"]
    half = len(events) // 2
    end = next(i for i in range(half, len(events)) if isinstance(events[i], GameEnded | RoundClosed))  # these checkpoint the index
    root = recorded(tmp_path / "l", events[:half])
    log = LedgerLog(root)
    with Ledger.open(root) as ledger:
        for at in range(half, end, 5):
            base = ledger.size
            record_events(ledger, events[at:min(at + 5, end)])
            ledger.checkpoint(index=False)
            for entry, event in enumerate(events[at:min(at + 5, end)], start=base):
                log.add(entry, event)
        assert indexed_size(root) == half < end
        for stream in {e.stream for e in events[:end]}:
            view = log.stream(stream, end)
            assert view.events == [e for e in events[:end] if e.stream == stream], stream
            assert view.entries.tolist() == [i for i, e in enumerate(events[:end]) if e.stream == stream]
            assert view.stored == [msgspec.json.encode(e) for e in view.events]


def test_a_small_log_without_kept_files_is_folded_before_the_first_batch(tmp_path: Path) -> None:
    """Issue 14 (live audit): a service started on a ledger that has entries (sources, a finished
    game) but no `derived/live/` files yet folds that short log before it takes batches, as it does
    a short tail after its kept state, so `/live` and `/findings` answer from the first request (a
    503 "rebuilding" here had kept a subscriber who connected at start-up off the live stream)."""
    root = tmp_path / "L"
    init(root, "serve.test/log")
    venue = make_source(tmp_path, root, "venue")
    with Ledger.open(root) as ledger:
        record_events(ledger, bot_game("junqi", 3))
        ledger.checkpoint()
    with Server(root) as server:
        status, body = get(server.url, "/healthz")  # at once: the service has only just said it started
        assert status == 200 and json.loads(body)["live"] == "ready", body
        assert get(server.url, "/findings?since=0")[0] == 200
        order = [r.get("at") for r in server.lines]
        assert "live" in order and order.index("live") < order.index("started"), order
        assert not server.lines[order.index("live")]["resumed"]
    assert venue is not None
