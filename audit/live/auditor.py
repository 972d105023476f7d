"""The live audit (issue 14, item 5): each game folded by its engine's own fold as its events arrive,
and the tournament checks that need a whole round run when the round closes.

A game's fold (`engine.replay`) is a generator over an iterable of events that yields one `Step`
per event and never reads ahead. The live audit hands it an inbox it pushes one event into before
pulling one step out, so each event is folded once, when it arrives, and never again. When a
tournament's round closes (`tournament.round_closed`), the audit's SQL and tournament checks run
over the data so far, built from those folds without replaying anything (`project_replayed`), and
the findings they add are published then. Findings are numbered densely in publication order: the
same log gives the same numbers, whether it was fed in one batch, event by event, or read back at
start-up (`from_ledger`, or `open` from what the service persisted).

The service's auditor keeps in memory only what is still open: the games under way (each game's
fold is dropped at its `game.ended`, and taken up again from its entries, read through the stream
index, should a later event of the game arrive) and the few streams that are not games
(tournaments, sources, appeals). A round close reads through the index (`LedgerLog`, over
`audit/live/follow.py`'s reader) only the games of its tournament touched since its last close, and
runs the tournament checks over every game's small rows kept from that close (audit/live/rounds.py,
issue 32.2): nothing keeps every entry's bytes or events, nor folds a finished game again at every close. In the
service the auditor follows the log: told only that it grew, it reads the new entries itself
(`catch_up`). What it has published, and how far it read, is kept in the ledger by
`audit/live/store.py`, so that a restart reads the open games and the entries recorded since, not
the whole season.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from audit.live.follow import CountingReader
from audit.live.rounds import KEPT_BUILT, KEPT_TABLES, RoundRows, renumbered
from audit.query.arbitration import RulingSigners
from audit.query.jsonsplit import split
from audit.query.kept_read import rows_where
from ledger.derived import indexed_size
from ledger.reader import LogReader, StoredEntries
from replay.fold import GameFold, RulingCheck
from replay.protocol import Finding, GameEngine
from replay.registry import game_of
from replay.run import GameReplay, KeepSteps
from replay.values import event_kind
from schemas import decode_stored, decode_stored_array
from schemas.arbitration import ARBITER_STREAM
from schemas.common import GameEnded, GameStarted, RoundClosed, Ruling, TournamentOpened
from schemas.envelope import Event
from schemas.log import BATCHES_STREAM

TOURNAMENT = "tournament"
"""The `game` of a finding on a stream that is not a game (a tournament's, or an orphan stream)."""
ENGINE_STOPPED = "audit.E01"
"""A live finding: the engine raised on an event, so the game's later events are not folded."""
ROUND_CHECKS_FAILED = "audit.E02"
"""A live finding: the round checks raised at a round close, so that round was not checked then."""
READ_BATCH = 4096
"""Entries decoded per call when the log is read back at start-up."""
TRIM_EVERY = 16384
"""Entries kept beyond the index on disk after which the auditor looks whether it covers them now."""


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


class LiveGame:
    """One game folded as its events arrive: the fold driver (replay/fold.py) pushed one event at a time."""

    def __init__(self, start: GameStarted, entries: array, rulings: RulingCheck | None = None) -> None:
        self.start = start
        self.kept = KeepSteps()
        self.fold: GameFold[GameReplay] = GameFold(start, self.kept, rulings=rulings)
        self.game = self.fold.game
        self.engine: GameEngine = self.fold.engine
        self.inbox = self.fold.inbox
        self.entries = entries
        """The game's entries, in seq order (the auditor appends each before it is pushed)."""
        self.pushed: list[Event] = []
        """The events pushed, as they came (a stopped engine's later events among them)."""
        self.stopped = False
        self.ended = False

    @property
    def events(self) -> list[Event]:
        """The events folded, in order."""
        return self.fold.events

    def push(self, event: Event) -> tuple[Finding, ...]:
        """Folds one more event of the game; returns its findings."""
        self.pushed.append(event)
        self.ended = self.ended or isinstance(event, GameEnded)
        if self.stopped:
            return ()
        try:
            found = self.fold.push(event).findings
        except Exception as exc:  # noqa: BLE001 - whatever stops an engine is reported, not raised into the service
            self.stopped = True
            return (Finding(stream=event.stream, seq=event.seq, code=ENGINE_STOPPED,
                            message=f"引擎在 {event_kind(event.kind)} 处停止，本局此后的事件不再实时复盘 the {self.game} engine stopped "
                                    f"at {event.kind}: {exc}; the game's later events are not folded"),)
        if isinstance(event, Ruling):  # a ruling that cannot be applied is a finding at its own seq, as in the batch
            unusable = tuple(f for f in self.fold.end().unusable if f.seq == event.seq)
            self.kept.findings.extend(unusable)
            found = (*found, *unusable)
        return found

    def replay(self) -> GameReplay:
        """Returns the game as folded so far, in the shape of a batch replay."""
        end, kept = self.fold.end(), self.kept  # the rulings' findings are among kept.findings already
        return GameReplay(self.start.stream, self.game, self.start, kept.step_events, kept.step_facts, end.ruled,
                          kept.findings, end.state, kept.step_events, end.derived, end.rulings)

    def folded_entries(self) -> array:
        """Returns the entries of the steps folded (a stopped engine's game, as far as it went), one
        per step: a ruling set aside has its step, though it is not among the events folded."""
        return array("q", (self.entries[e.seq] for e in self.kept.step_events))

    def holder(self, seat: int | None) -> str | None:
        """Returns who holds a seat of the game (a player, or `program@version`)."""
        return holder(self.start, seat)


class View(msgspec.Struct):
    """One stream as far as it is known: its entries and events in seq order, and the game's start
    (None for a stream that is not a game)."""

    entries: array
    events: list[Event]
    start: GameStarted | None = None
    stored: list[bytes] = []
    """The entries' stored bytes, when they were read (a round close needs them)."""


class ReadBack(Protocol):
    """Where the live audit reads back entries it no longer holds; `entries_read` counts them."""

    @property
    def entries_read(self) -> int: ...

    def add(self, entry: int, event: Event) -> None:
        """Takes note of an entry as it is folded."""

    def stream(self, stream: str, size: int) -> View:
        """Returns one stream's entries among the first `size`, with their events and stored bytes."""

    def streams(self, streams: Sequence[str], size: int) -> dict[str, View]:
        """Returns several streams as `stream` does."""


class MemoryLog:
    """The log of an auditor fed without a ledger (tests, simulations): every entry is kept."""

    def __init__(self, stored: StoredEntries | None = None) -> None:
        self.events: list[Event] = []
        self.entries: dict[str, array] = {}
        """Every stream's entries, in seq order."""
        self._data = bytearray(stored.data) if stored else bytearray()
        self._ends = array("q", stored.ends) if stored else array("q", [0])
        """The canonical bytes of the entries known so far: entry i is _data[_ends[i]:_ends[i + 1]]."""
        self.entries_read = 0

    def add(self, entry: int, event: Event) -> None:
        self.events.append(event)
        self.entries.setdefault(event.stream, array("q")).append(entry)

    def stream(self, stream: str, size: int) -> View:
        entries = array("q", (e for e in self.entries.get(stream, ()) if e < size))
        self._encode(size)
        self.entries_read += len(entries)
        return View(entries, [self.events[e] for e in entries],
                    stored=[bytes(self._data[self._ends[e]:self._ends[e + 1]]) for e in entries])

    def streams(self, streams: Sequence[str], size: int) -> dict[str, View]:
        return {stream: self.stream(stream, size) for stream in streams}

    def _encode(self, n: int) -> None:
        """Encodes the entries not known yet in one call (the recorder stores msgspec's encoding)."""
        known = len(self._ends) - 1
        if known < n:
            data, ends = split(msgspec.json.encode(self.events[known:n]))
            base = self._ends[-1]
            self._data += data
            self._ends.extend([base + end for end in ends[1:]])


class LedgerLog:
    """A ledger's entries read back as needed, through its reader (`audit/live/follow.py`): a stream
    through the stream index, a run of entries by index. The service flushes the index on disk every
    few seconds, so for the entries folded since the index last covered, the log notes each stream's
    entry numbers (dropped once the index covers them) and reads their stored bytes back when a
    stream is asked for; it keeps no event and no bytes."""

    def __init__(self, root: Path, reader: CountingReader | None = None) -> None:
        self.root = root
        self.reader = reader if reader is not None else CountingReader(root)
        self._indexed = indexed_size(root)
        self._recent: dict[str, array] = {}
        self._kept = 0

    @property
    def entries_read(self) -> int:
        """Counts the entries read back through the reader."""
        return self.reader.entries_read

    def add(self, entry: int, event: Event) -> None:
        if entry >= self._indexed:
            self._recent.setdefault(event.stream, array("q")).append(entry)
            self._kept += 1
            if self._kept >= TRIM_EVERY:
                self._trim()

    def stream(self, stream: str, size: int) -> View:
        return self.streams([stream], size)[stream]

    def streams(self, streams: Sequence[str], size: int) -> dict[str, View]:
        """Returns several streams as `stream` does, each segment opened once for them all, and the
        entries after the index read back in one run."""
        self._trim()
        read = self.reader.streams(streams, min(size, self._indexed))
        recent = {stream: [e for e in self._recent.get(stream, ()) if e < size] for stream in streams}
        tail = self._tail(sorted(e for entries in recent.values() for e in entries))
        return {stream: self._view(found + [(e, tail[e]) for e in recent[stream]]) for stream, found in read.items()}

    def _tail(self, wanted: list[int]) -> dict[int, bytes]:
        """Returns the stored bytes of some entries after the index, read in one run from the first."""
        if not wanted:
            return {}
        keep = set(wanted)
        return {e: data for e, data in self.reader.entries(wanted[0], wanted[-1] + 1 - wanted[0]) if e in keep}

    @staticmethod
    def _view(found: list[tuple[int, bytes]]) -> View:
        stored = [data for _, data in found]
        return View(array("q", (entry for entry, _ in found)), decode_stored(stored), stored=stored)

    def _trim(self) -> None:
        indexed = indexed_size(self.root)
        if indexed > self._indexed:
            self._indexed = indexed
            self._recent = {stream: kept for stream, entries in self._recent.items()
                            if (kept := array("q", (e for e in entries if e >= indexed)))}
        self._kept = sum(map(len, self._recent.values()))

    def prime(self, size: int) -> None:
        """Notes the streams of the entries the index on disk does not cover, up to `size` (at start-up:
        the writer flushes the index when it opens, so there are none but after a writer that did not)."""
        first = self._indexed
        while first < size:
            count = min(READ_BATCH, size - first)
            for entry, event in enumerate(self.read(first, count), start=first):
                self.add(entry, event)
            first += count

    def read(self, first: int, count: int) -> list[Event]:
        """Returns the events of entries first … first + count − 1, each decoded once from its stored bytes."""
        return decode_stored([data for _, data in self.reader.entries(first, count)])


class FindingBook(Protocol):
    """Where the published findings are kept, with the round findings' keys and each tournament's games."""

    published: set[tuple[str, str, int | None]]

    def __len__(self) -> int: ...

    def add(self, finding: LiveFinding, key: tuple[str, str, int | None] | None) -> None: ...

    def since(self, n: int, limit: int) -> list[LiveFinding]: ...

    def add_game(self, tournament: str, stream: str) -> None: ...

    def games_of(self, tournament: str) -> list[str]: ...

    def fed(self, auditor: LiveAuditor) -> None:
        """Called after each feed: a persisting book notes how far the log is folded."""


class MemoryBook:
    """The findings of an auditor that persists nothing: in memory, published in order."""

    def __init__(self) -> None:
        self.findings: list[LiveFinding] = []
        self.published: set[tuple[str, str, int | None]] = set()
        self._games: dict[str, list[str]] = {}

    def __len__(self) -> int:
        return len(self.findings)

    def add(self, finding: LiveFinding, key: tuple[str, str, int | None] | None) -> None:
        self.findings.append(finding)
        if key is not None:
            self.published.add(key)

    def since(self, n: int, limit: int) -> list[LiveFinding]:
        return self.findings[max(n, 0):max(n, 0) + limit]

    def add_game(self, tournament: str, stream: str) -> None:
        self._games.setdefault(tournament, []).append(stream)

    def games_of(self, tournament: str) -> list[str]:
        return list(self._games.get(tournament, ()))

    def fed(self, auditor: LiveAuditor) -> None:
        pass


class LiveAuditor:
    """Folds a log's games as their entries arrive and numbers the findings as they are published.

    In memory it holds the games under way and the streams that are not games; a finished game, a
    round's games and the entries since a restart are read back through `log`; `book` keeps the findings.
    """

    close_share = 500
    """Games a round close reads, folds and projects at once: when more are to be folded (every game
    of a tournament at its first close, or the first since a start without kept state; a round's
    games at the next) their per-game checks run a share at a time, and the tournament's over the
    small rows kept of them all, so a close's memory follows a share, not the round (a 2,000-game
    round of the 3 M event took the service past 1.4 GB)."""

    def __init__(self, log: ReadBack | None = None, book: FindingBook | None = None) -> None:
        self.log: ReadBack = log if log is not None else MemoryLog()
        self.book: FindingBook = book if book is not None else MemoryBook()
        self.size = 0
        """The entries folded: the next entry fed must be this one."""
        self.games: dict[str, LiveGame] = {}
        """The games under way (a game's fold is dropped at its game.ended)."""
        self.others: set[str] = set()
        """Every stream that is not a game: tournaments, the log's own, appeals, orphans (read back when a round closes)."""
        self.tournaments: set[str] = set()
        self.refolded = 0
        """Events folded again to take up a game whose fold was dropped (or to check a round)."""
        self.rounds: dict[str, RoundRows] = {}
        """What each tournament's last round close kept of its games for the next (audit/live/rounds.py)."""
        self.touched: dict[str, set[str]] = {}
        """Each tournament's games with an entry folded since its last round close whose checks ran."""
        self._folded = 0
        self._current: Event | None = None
        self._found: list[LiveFinding] = []
        self._lock = threading.Lock()
        """Serialises feeds: entries are folded in log order."""

    @classmethod
    def from_ledger(cls, ledger_dir: Path) -> LiveAuditor:
        """Folds every entry a ledger holds, as if each had just arrived, keeping the whole log in
        memory (the service opens with `audit.live.store.open_auditor` instead).

        :raises LedgerCorrupt: when a damaged frame stops the reading.
        """
        log = LogReader(ledger_dir).packed()
        auditor = cls(MemoryLog(log))  # the stored bytes, never re-encoded
        for lo in range(0, len(log), READ_BATCH):
            at = array("q", range(lo, min(lo + READ_BATCH, len(log))))
            for entry, event in zip(at, decode_stored_array(log.json_array(at))):
                auditor._fold(entry, event)
        return auditor

    @property
    def findings(self) -> list[LiveFinding]:
        """Every finding published, in order (read back from the book)."""
        return self.book.since(0, len(self.book))

    @property
    def steps_folded(self) -> int:
        """Counts the events the engines' folds have taken in as they arrived (each once)."""
        return self._folded

    def feed(self, entries: Sequence[tuple[int, Event]]) -> list[LiveFinding]:
        """Folds newly committed entries, in entry order; returns the findings they produced, numbered.
        An entry folded already is skipped (a repeated delivery).

        :raises FeedError: when an entry index is not the next one of the log (an auditor reading a
            ledger reads the entries it missed instead).
        """
        with self._lock:
            self._found = []
            for entry, event in entries:
                if entry < self.size:
                    continue
                if entry != self.size:
                    self._read_up_to(entry)
                self._fold(entry, event)
            self.book.fed(self)
            return self._found

    def catch_up(self, size: int, progress: Callable[[int], None] | None = None) -> list[LiveFinding]:
        """Folds the ledger's entries from the next one up to `size`, read back a batch at a time.

        :raises FeedError: when the auditor has no ledger to read. :raises LedgerCorrupt: as the reading.
        """
        with self._lock:
            self._found = []
            self._read_up_to(size, progress)
            self.book.fed(self)
            return self._found

    def _read_up_to(self, size: int, progress: Callable[[int], None] | None = None) -> None:
        if not isinstance(self.log, LedgerLog):
            raise FeedError(f"entry {size} fed where entry {self.size} is the next of the log")
        while self.size < size:
            first = self.size
            for entry, event in enumerate(self.log.read(first, min(READ_BATCH, size - first)), start=first):
                self._fold(entry, event)
            self.book.fed(self)
            if progress:
                progress(self.size)

    def since(self, n: int, limit: int = 1000) -> list[LiveFinding]:
        """Returns the findings numbered after `n`, at most `limit` of them. It never waits for a feed
        (a round close may take seconds): findings are only ever appended, each complete."""
        return self.book.since(n, limit)

    # -- folding one entry -----------------------------------------------------------------------

    def _fold(self, entry: int, event: Event) -> None:
        self.log.add(entry, event)
        self.size = entry + 1
        self._current = event
        stream = event.stream
        game = self.games.get(stream)
        if game is None:
            if stream in self.others:
                if isinstance(event, RoundClosed) and stream in self.tournaments:
                    self._checked_round(event)
                return
            game = self._take_up(stream, entry) if event.seq > 0 else None  # a finished game's later event (a ruling)
            game = game or self._open_stream(entry, event)
            if game is None:
                return
        if game.start.tournament is not None:
            self.touched.setdefault(game.start.tournament, set()).add(stream)
        game.entries.append(entry)
        pulls = game.inbox.pulls
        found = game.push(event)
        self._folded += game.inbox.pulls - pulls
        for finding in found:
            self._publish(finding, View(game.entries, game.pushed, game.start))
        if game.ended:  # what a round close needs of it is read back through the index
            del self.games[stream]

    def _open_stream(self, entry: int, event: Event) -> LiveGame | None:
        """Starts following a new stream: returns a game's, or keeps a tournament's or another (an
        orphan is a finding, as in the audit)."""
        if isinstance(event, GameStarted):
            game = self.games[event.stream] = self._game(event)
            if event.tournament is not None:
                self.book.add_game(event.tournament, event.stream)
            return game
        self.others.add(event.stream)
        if isinstance(event, TournamentOpened):
            self.tournaments.add(event.stream)
        else:
            from audit.query.projection import is_orphan, orphan

            if is_orphan(event.stream, event.kind):
                self._publish(orphan(event.stream, [event]), View(array("q", [entry]), [event]))
        return None

    def _take_up(self, stream: str, size: int) -> LiveGame | None:
        """Folds again, publishing nothing, a game whose fold was dropped; None when the stream is no game."""
        view = self.log.stream(stream, size)
        if not view.events or not isinstance(view.events[0], GameStarted):
            return None
        game = self.games[stream] = self.refold(view)
        return game

    def refold(self, view: View) -> LiveGame:
        """Returns a game folded from its events so far; their findings were published already."""
        game = self._game(view.events[0])  # type: ignore[arg-type]
        for entry, event in zip(view.entries, view.events):
            game.entries.append(entry)
            game.push(event)
        self.refolded += len(view.events)
        return game

    def _game(self, start: GameStarted) -> LiveGame:
        """A game to fold, whose rulings count only when signed, as in the batch audit: its
        ruling and the arbiters registered before it are read back when a ruling comes."""
        entries = array("q")

        def why_not(ruling: Ruling) -> str | None:
            entry = entries[ruling.seq]
            arbiters = self.log.stream(ARBITER_STREAM, entry)
            signers = RulingSigners(list(zip(arbiters.entries, arbiters.stored)))
            return signers.why_not(self.log.stream(start.stream, entry + 1).stored[ruling.seq], ruling, entry)

        return LiveGame(start, entries, why_not)

    # -- a round closes --------------------------------------------------------------------------

    def _checked_round(self, event: RoundClosed) -> None:
        """Runs the round checks; what stops them is a finding at the round close, not an error
        raised into the service (the next round close checks everything again)."""
        try:
            self._close_round(event)
        except Exception as exc:  # noqa: BLE001
            self._publish(Finding(stream=event.stream, seq=event.seq, code=ROUND_CHECKS_FAILED,
                                  message=f"第 {event.round} 轮的检查未能实时运行（批量审计仍会运行） the checks of round {event.round} "
                                          f"could not run: {type(exc).__name__}: {exc}"),
                          None)  # at the round close being folded

    def _close_round(self, event: RoundClosed) -> None:
        """Runs the audit's SQL and tournament checks of the tournament over its data so far, and
        publishes the findings no earlier round close published (the engines' are published as they
        occur). The per-game checks run over the games touched since the tournament's last round
        close, the tournament-level ones over every game's small rows kept from it (`_closing`)."""
        from audit.certification.certify import collect_findings

        tournament = event.stream
        kept = self.rounds.get(tournament)
        touched = list(dict.fromkeys(self.book.games_of(tournament))) if kept is None else sorted(self.touched.get(tournament, ()))
        if len(touched) > self.close_share:
            kept = self._kept_in_shares(tournament, kept, touched)
            closing = self._closing(tournament, kept, [], set(kept.boards(touched).values()))
        else:
            closing = self._closing(tournament, kept)
        self._publish_rows(collect_findings(closing.session, tournament), closing)
        self.rounds[tournament] = closing.kept
        self.touched.pop(tournament, None)

    def _kept_in_shares(self, tournament: str, kept: RoundRows | None, games: list[str]) -> RoundRows:
        """Runs the per-game checks of a round close's games a share at a time (`close_share`),
        publishing their findings, and returns the small rows kept of the tournament's games with
        theirs: the close then runs the tournament's checks over those, reading the games of the
        Paohuzi boards they played, as a close with no game touched since the last."""
        from audit.certification.certify import collect_findings

        for at in range(0, len(games), self.close_share):
            share = games[at:at + self.close_share]
            closing = self._closing(tournament, kept, share, per_game=True)
            self._publish_rows(collect_findings(closing.session, tournament, per_game=set(share)), closing)
            kept = closing.kept
        assert kept is not None
        return kept

    def _publish_rows(self, rows: list[dict[str, Any]], closing: Closing) -> None:
        """Publishes the check rows of a round close that no earlier close published (the engines' are published as they occur)."""
        streams, games = closing.streams, set(closing.kept.streams())
        for row in rows:
            key = (row["code"], row["stream"], row["seq"])
            if row["source"] != "replay" and key not in self.book.published:
                view = streams.get(row["stream"])
                if view is None and row["stream"] in games:  # a game of the tournament this close did not read
                    view = self._views([row["stream"]]).get(row["stream"])
                last = len(view.entries) - 1 if view is not None else 0
                seq = int(row["seq"]) if row["seq"] is not None else last  # a whole game's or pairing's: its last event
                self._publish(Finding(stream=row["stream"], seq=seq, code=row["code"], article=row["article"],
                                      message=row["message"], severity=row["severity"]), view, key)

    def _closing(self, tournament: str, kept: RoundRows | None, touched: list[str] | None = None,
                 boards: set[str] | None = None, per_game: bool = False) -> Closing:
        """Returns what a round close checks: with nothing kept of the tournament (its first close, or
        the first since a restart) every game read back and folded, as `round_projection`; else the
        games touched since its last close (a finished one folded again, one under way with its own
        fold; `touched`, when given, instead of either: a share of a close), the games the
        tournament checks read the events of (those with a ruling, and the Paohuzi tables of a board
        one of them played, or of `boards`), unfolded, and every other game's small rows as kept
        (audit/live/rounds.py); with `per_game` (a share, whose per-game checks alone run) none of those
        other games is read: each of those checks rests on its game's own rows. The per-game check
        queries then run over the games touched only (audit/certification/scoped.py `answering`), the
        others over the whole tournament. A game not touched whose events hold the
        competition's latest timestamp (which `game_status` and the appeal deadlines read) is read
        too, unfolded.

        Where the rows kept would not give the very rows of the whole tournament's projection (its
        rules changed) the close reads and folds every game instead. A ruling recorded after a round
        was seated is no such case: the seating check's database as of then (`tournament_checks.as_of`)
        takes `seat_times`, as every table resting on one stream's events alone, as it was built."""
        from audit.certification.scoped import answering
        from audit.query.db import AuditDB
        from audit.query.session import Session

        if touched is None:
            touched = list(dict.fromkeys(self.book.games_of(tournament))) if kept is None else sorted(self.touched.get(tournament, ()))
        streams, games = self._games_folded(touched)
        if kept is not None and not per_game:
            played = (boards or set()) | {g.start.board for g in games if game_of(g.start) == "paohuzi" and g.start.board}
            read = [s for s, board in kept.boards(kept.streams()).items() if board in played and s not in streams]
            streams.update(self._views(read + sorted(kept.ruled - streams.keys() - set(read))))
        streams.update(self.log.streams(sorted(self.others - {BATCHES_STREAM}), self.size))
        if kept is not None and not per_game:  # the competition's clock is the latest event's (`game_status`): a game not read may hold it
            clock = max((e.ts for s, view in streams.items() if not s.startswith("log.") for e in view.events), default=None)
            streams.update(self._views(kept.later_than(clock, streams)))
        projection, entries = self._project(streams, games)
        db = AuditDB(projection.tables())
        folded = {g.start.stream for g in games if g.events}
        fresh = {name: _logged(projection.table(name), entries) for name in KEPT_TABLES}
        built = db.built_tables()
        fresh.update({name: rows_where(built[name], "stream", folded) for name in KEPT_BUILT})
        last_ts = {s: max(e.ts for e in streams[s].events) for s in folded}
        ruled = folded & set(projection.table("rulings")["stream"].to_pylist())
        rules = [t for t in projection.tournaments if t["tournament"] == tournament]
        if kept is None:
            return Closing(Session(projection, db), streams, RoundRows.of(fresh, last_ts, ruled, rules))
        if rules != kept.tournament:
            return self._closing(tournament, None)
        rows = kept.updated(fresh, last_ts, ruled, rules)
        numbers = {entry: n for n, entry in enumerate(entries)}
        tournament_wide = replace(projection, arrow={**projection.arrow, **{name: renumbered(rows.tables[name], numbers) for name in KEPT_TABLES}})
        checked = AuditDB(tournament_wide.tables(), built={**{name: rows.tables[name] for name in KEPT_BUILT}, "timings": built["timings"]})
        answering(checked, db, folded)
        return Closing(Session(tournament_wide, checked), streams, rows)

    def round_projection(self, tournament: str) -> tuple[dict[str, View], Any]:
        """Returns the streams a tournament's round checks read when nothing is kept of it (its games
        and every stream that is not a game but the batch records, which no check reads: one per
        batch, they grow with the season), read back through the index, and their projection, built
        from the games' folds (a game under way's own, a finished game's folded again) without
        keeping the log.

        The projection's entries are those streams' entries, renumbered in log order."""
        streams, games = self._games_folded(list(dict.fromkeys(self.book.games_of(tournament))))
        streams.update(self.log.streams(sorted(self.others - {BATCHES_STREAM}), self.size))
        return streams, self._project(streams, games)[0]

    def _games_folded(self, games: list[str]) -> tuple[dict[str, View], list[LiveGame]]:
        """Reads some games back through the index with their folds: a game under way's own, a
        finished game's folded again."""
        streams: dict[str, View] = {}
        folded = []
        for stream, view in self.log.streams(games, self.size).items():
            if view.events:
                game = self.games.get(stream) or self.refold(view)
                view.start = game.start
                streams[stream] = view
                folded.append(game)
        return streams, folded

    def _views(self, streams: list[str]) -> dict[str, View]:
        """Reads some streams back through the index, folding none (a game's start noted)."""
        found = {}
        for stream, view in (self.log.streams(streams, self.size).items() if streams else ()):
            if view.events:
                view.start = view.events[0] if isinstance(view.events[0], GameStarted) else None
                found[stream] = view
        return found

    @staticmethod
    def _project(streams: dict[str, View], games: list[LiveGame]) -> tuple[Any, array]:
        """Returns the projection of some streams (`project_replayed`), the games among them of
        `games` with their folds, and the log's entry of each of its entries (it numbers them in log
        order among those of the streams)."""
        from audit.query.projection import project_replayed

        placed = sorted((entry, n, seq) for n, view in enumerate(streams.values()) for seq, entry in enumerate(view.entries))
        views = list(streams.values())
        renumbered = {entry: row for row, (entry, _, _) in enumerate(placed)}
        data = [views[n].stored[seq] for _, n, seq in placed]
        ends = array("q", [0])
        for stored in data:
            ends.append(ends[-1] + len(stored))
        log = StoredEntries(b"".join(data), ends)
        events = [views[n].events[seq] for _, n, seq in placed]
        folded = [(g.replay(), array("q", (renumbered[e] for e in g.folded_entries()))) for g in games if g.events]
        return project_replayed(log, events, folded), array("q", (entry for entry, _, _ in placed))

    def _publish(self, finding: Finding, view: View | None, key: tuple[str, str, int | None] | None = None) -> None:
        seq = finding.seq
        event: Event | None
        if view is not None and 0 <= seq < len(view.entries):
            entry, event = view.entries[seq], view.events[seq]
        else:  # past the stream's end: where the log is
            entry, event = self.size - 1, self._current
        start = view.start if view is not None else None
        seat = event.seat if event is not None and event.stream == finding.stream else None
        player = holder(start, seat) if start is not None else getattr(event, "player", None)
        published = LiveFinding(
            id=len(self.book) + 1, entry=entry, game=game_of(start) if start is not None else TOURNAMENT, stream=finding.stream,
            seq=seq, seat=seat, player=player, code=finding.code, article=finding.article, message=finding.message,
            severity=finding.severity,
        )
        self.book.add(published, key)
        self._found.append(published)


class Closing(NamedTuple):
    """What a round close checks: the session its checks run on, the streams it read (by stream), and
    what the tournament's next round close keeps of its games."""

    session: Any
    streams: dict[str, View]
    kept: RoundRows


def _logged(table: pa.Table, entries: array) -> pa.Table:
    """Returns a projection's table with its entries the log's (`entries`: the log's entry of each of the projection's)."""
    at = table.schema.get_field_index("entry")
    return table.set_column(at, table.schema.field(at), pc.take(pa.array(entries, pa.int64()), table["entry"]))


def holder(start: GameStarted, seat: int | None) -> str | None:
    """Returns who holds a seat of a game (a player, or `program@version`)."""
    return next((h.holder for h in start.seats if h.seat == seat), None)
