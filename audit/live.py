"""The live audit (issue 14, item 5): each game folded by its engine's own fold as its events arrive,
and the tournament checks that need a whole round run when the round closes.

A game's fold (`engine.replay`) is a generator over an iterable of events that yields one `Step`
per event and never reads ahead. The live audit hands it an inbox it pushes one event into before
pulling one step out, so each event is folded once, when it arrives, and never again. When a
tournament's round closes (`tournament.round_closed`), the audit's SQL and tournament checks run
over the data so far, built from those folds without replaying anything (`project_replayed`), and
the findings they add are published then. Findings are numbered densely in publication order: the
same log gives the same numbers, whether it was fed in one batch, event by event, or read back at
start-up (`from_ledger`).
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import msgspec

from audit.jsonsplit import split
from ledger import StoredEntries, read_entries
from replay.protocol import Finding, GameEngine, Step
from replay.registry import engine
from replay.run import GameReplay
from schemas import decode_stored_array
from schemas.common import GameStarted, RoundClosed, TournamentOpened
from schemas.envelope import Event

TOURNAMENT = "tournament"
"""The `game` of a finding on a stream that is not a game (a tournament's, or an orphan stream)."""
ENGINE_STOPPED = "audit.L01"
"""A live finding: the engine raised on an event, so the game's later events are not folded."""
ROUND_CHECKS_FAILED = "audit.L02"
"""A live finding: the round checks raised at a round close, so that round was not checked then."""
READ_BATCH = 4096
"""Entries decoded per call when the log is read back at start-up."""


class LiveFinding(msgspec.Struct, frozen=True, kw_only=True):
    """A finding as the live audit publishes it: its number, where it is (entry, game, stream, seq,
    the seat and who holds it), the rule (code, article), why, and how grave."""

    id: int
    entry: int
    game: str
    stream: str
    seq: int
    seat: int | None
    player: str | None
    code: str
    article: str | None
    message: str
    severity: str

    def line(self) -> str:
        """Returns the finding as one line: `game code (article): stream seq seat/player: message [severity]`."""
        article = f" ({self.article})" if self.article else ""
        seat = "-" if self.seat is None else str(self.seat)
        return (f"{self.game} {self.code}{article}: {self.stream} {self.seq} {seat}/{self.player or '-'}: "
                f"{self.message} [{self.severity}]")


class FeedError(ValueError):
    """Entries were fed out of log order (a gap, or an entry index that is not the next one)."""


class FoldReadAhead(RuntimeError):
    """An engine's fold asked for an event before the one pushed was folded: it cannot run live."""


class _Inbox:
    """The iterator a fold reads: it holds the one event pushed before each pull, and counts the pulls."""

    __slots__ = ("event", "pulls")

    def __init__(self) -> None:
        self.event: Event | None = None
        self.pulls = 0

    def __iter__(self) -> _Inbox:
        return self

    def __next__(self) -> Event:
        event, self.event = self.event, None
        if event is None:
            raise FoldReadAhead("the fold asked for an event that has not arrived")
        self.pulls += 1
        return event


class LiveGame:
    """One game folded as its events arrive: the engine's fold, pulled one step per event pushed."""

    def __init__(self, start: GameStarted, entries: array) -> None:
        self.start = start
        self.game = str(start.profile.__struct_config__.tag)  # type: ignore[attr-defined]
        self.engine: GameEngine = engine(self.game)
        self.inbox = _Inbox()
        self.fold: Iterator[Step] = self.engine.replay(self.inbox)
        self.events: list[Event] = []
        self.facts: list[dict[str, Any]] = []
        self.findings: list[Finding] = []
        self.entries = entries
        """The game's entries, in seq order (the auditor appends each before it is pushed)."""
        self.state: Any = None
        self.stopped = False

    def push(self, event: Event) -> tuple[Finding, ...]:
        """Folds one more event of the game; returns its findings."""
        if self.stopped:
            return ()
        self.inbox.event = event
        try:
            step = next(self.fold)
        except Exception as exc:  # noqa: BLE001 - whatever stops an engine is reported, not raised into the service
            self.stopped = True
            return (Finding(stream=event.stream, seq=event.seq, code=ENGINE_STOPPED, message=f"the {self.game} engine stopped "
                            f"at {event.kind}: {exc}; the game's later events are not folded"),)
        self.events.append(step.event)
        self.facts.append(step.facts)
        self.state = step.state
        if step.findings:
            self.findings.extend(step.findings)
        return step.findings

    def replay(self) -> GameReplay:
        """Returns the game as folded so far, in the shape of a batch replay."""
        return GameReplay(self.start.stream, self.game, self.start, self.events, self.facts, self.engine.outcome(self.state),
                          self.findings, self.state, self.events)

    def holder(self, seat: int | None) -> str | None:
        """Returns who holds a seat of the game (a player, or `program@version`)."""
        return next((h.holder for h in self.start.seats if h.seat == seat), None)


class LiveAuditor:
    """Folds a log's games as their entries arrive and numbers the findings as they are published."""

    def __init__(self) -> None:
        self.findings: list[LiveFinding] = []
        self.games: dict[str, LiveGame] = {}
        self.tournaments: set[str] = set()
        self.streams: dict[str, array] = {}
        """Every stream's entries, in seq order."""
        self.events: list[Event] = []
        """Every entry's event: row i is entry i."""
        self._data = bytearray()
        self._ends = array("q", [0])
        """The canonical bytes of the entries known so far: entry i is _data[_ends[i]:_ends[i + 1]]."""
        self._published: set[tuple[str, str, int | None]] = set()
        """The round findings published so far, as the audit places them (code, stream, seq)."""
        self._lock = threading.Lock()
        """Serialises feeds: entries are folded in log order."""

    @classmethod
    def from_ledger(cls, ledger_dir: Path) -> LiveAuditor:
        """Folds every entry a ledger holds, as if each had just arrived.

        :raises LedgerCorrupt: when a damaged frame stops the reading.
        """
        auditor = cls()
        log = read_entries(ledger_dir)
        auditor._data, auditor._ends = bytearray(log.data), array("q", log.ends)  # the stored bytes, never re-encoded
        for lo in range(0, len(log), READ_BATCH):
            at = array("q", range(lo, min(lo + READ_BATCH, len(log))))
            for entry, event in zip(at, decode_stored_array(log.json_array(at))):
                auditor._fold(entry, event)
        return auditor

    @property
    def steps_folded(self) -> int:
        """Counts the events the engines' folds have taken in (each once)."""
        return sum(g.inbox.pulls for g in self.games.values())

    def feed(self, entries: Sequence[tuple[int, Event]]) -> list[LiveFinding]:
        """Folds newly committed entries, in entry order; returns the findings they produced, numbered.
        An entry folded already is skipped (a repeated delivery).

        :raises FeedError: when an entry index is not the next one of the log.
        """
        with self._lock:
            first = len(self.findings)
            for entry, event in entries:
                if entry < len(self.events):
                    continue
                if entry != len(self.events):
                    raise FeedError(f"entry {entry} fed where entry {len(self.events)} is the next of the log")
                self._fold(entry, event)
            return self.findings[first:]

    def since(self, n: int, limit: int = 1000) -> list[LiveFinding]:
        """Returns the findings numbered after `n`, at most `limit` of them. It never waits for a feed
        (a round close may take seconds): findings are only ever appended, each complete, and a
        slice of a list is taken whole."""
        return self.findings[max(n, 0):max(n, 0) + limit]

    # -- folding one entry -----------------------------------------------------------------------

    def _fold(self, entry: int, event: Event) -> None:
        self.events.append(event)
        game = self.games.get(event.stream)
        if game is not None:  # nearly every event: the next of a game under way
            game.entries.append(entry)
            found = game.push(event)
        else:
            found = self._fold_other(entry, event)
        for finding in found:
            self._publish(finding)

    def _fold_other(self, entry: int, event: Event) -> tuple[Finding, ...]:
        """Folds an event that is not the next of a game under way: a stream's first, or a tournament's."""
        stream = event.stream
        entries = self.streams.get(stream)
        if entries is None:
            entries = self.streams[stream] = array("q", [entry])
            found = self._open_stream(event, entries)
            game = self.games.get(stream)
            return game.push(event) if game is not None else found
        entries.append(entry)
        if isinstance(event, RoundClosed) and stream in self.tournaments:
            return self._checked_round(event)
        return ()

    def _open_stream(self, event: Event, entries: array) -> tuple[Finding, ...]:
        """Starts following a new stream: a game, a tournament, or an orphan (a finding, as in the audit)."""
        if isinstance(event, GameStarted):
            self.games[event.stream] = LiveGame(event, entries)
        elif isinstance(event, TournamentOpened):
            self.tournaments.add(event.stream)
        else:
            from audit.projection import is_orphan, orphan

            if is_orphan(event.stream, event.kind):
                return (orphan(event.stream, [event]),)
        return ()

    def _checked_round(self, event: RoundClosed) -> tuple[Finding, ...]:
        """Runs the round checks; what stops them is a finding at the round close, not an error
        raised into the service (the next round close checks everything again)."""
        try:
            return self._close_round(event)
        except Exception as exc:  # noqa: BLE001
            return (Finding(stream=event.stream, seq=event.seq, code=ROUND_CHECKS_FAILED,
                            message=f"the checks of round {event.round} could not run: {type(exc).__name__}: {exc}"),)

    def _close_round(self, event: RoundClosed) -> tuple[Finding, ...]:
        """Runs the audit's SQL and tournament checks of the tournament over the data so far; returns
        the findings no earlier round close published (the engines' are published as they occur)."""
        from audit.certify import collect_findings
        from audit.db import AuditDB
        from audit.projection import project_replayed
        from audit.session import Session

        log = self._stored()
        folded = [(g.replay(), g.entries[:len(g.events)]) for g in self.games.values() if g.events]  # a stopped engine's game, as far as it went
        projection = project_replayed(log, self.events, folded)
        rows = collect_findings(Session(projection, AuditDB(projection.tables())), event.stream)
        found = []
        for row in rows:
            key = (row["code"], row["stream"], row["seq"])
            if row["source"] != "replay" and key not in self._published:
                self._published.add(key)
                found.append(Finding(stream=row["stream"], seq=self._seq_of(row), code=row["code"], article=row["article"],
                                     message=row["message"], severity=row["severity"]))
        return tuple(found)

    def _stored(self) -> StoredEntries:
        """Returns the canonical bytes of every entry so far (the recorder stores msgspec's encoding),
        encoding those not known yet in one call: a round close needs them, an event does not."""
        n = len(self.events)
        known = len(self._ends) - 1
        if known < n:
            data, ends = split(msgspec.json.encode(self.events[known:]))
            base = self._ends[-1]
            self._data += data
            self._ends.extend([base + end for end in ends[1:]])
        return StoredEntries(bytes(memoryview(self._data)[:self._ends[n]]), self._ends[:n + 1])

    def _seq_of(self, row: dict[str, Any]) -> int:
        """Returns where a round finding sits: its seq, or where the audit gives none (a finding about
        a whole game or pairing), its stream's last event so far."""
        return int(row["seq"]) if row["seq"] is not None else len(self.streams[row["stream"]]) - 1

    def _publish(self, finding: Finding) -> None:
        entries = self.streams.get(finding.stream)
        seq = finding.seq
        entry = entries[seq] if entries is not None and 0 <= seq < len(entries) else len(self.events) - 1
        event = self.events[entry]
        game = self.games.get(finding.stream)
        seat = event.seat if event.stream == finding.stream else None
        player = game.holder(seat) if game is not None else getattr(event, "player", None)
        self.findings.append(LiveFinding(
            id=len(self.findings) + 1, entry=entry, game=game.game if game is not None else TOURNAMENT, stream=finding.stream,
            seq=seq, seat=seat, player=player, code=finding.code, article=finding.article, message=finding.message,
            severity=finding.severity,
        ))
