"""Faults the simulator can plant (`--inject`) to show that the audit catches each with the check
meant for it: an illegal move, a false result, a wrong score, a wrong seating, a tampered deal, a
claimed move time that disagrees with the timestamps, and one changed byte of the stored log."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from msgspec.structs import replace

from ledger import LogReader, load_verifier, newest_checkpoint
from schemas.common import GameEnded, MoveTimeUsed
from schemas.envelope import Event

FAULTS = ("illegal-move", "false-result", "wrong-score", "wrong-seating", "tampered-deal", "bad-move-time", "bad-byte")
EVENT_FAULTS = frozenset({"illegal-move", "false-result", "wrong-score", "bad-move-time"})
MOVE_KINDS = ("checkers.moved", "junqi.moved", "paohuzi.discarded")


@dataclass(frozen=True)
class Planted:
    """Where a simulation planted its fault: the stream and seq of the event it changed (for
    `bad-byte`, the log entry whose stored bytes it changed), so that a drill can be checked."""

    kind: str
    stream: str | None
    seq: int | None
    entry: int | None = None

    def describe(self) -> str:
        """Returns where the fault lies, for people."""
        if self.entry is not None:
            return f"planted {self.kind} in the stored bytes of log entry {self.entry}"
        return f"planted {self.kind} in {self.stream} at seq {self.seq}"


def check_fault(kind: str, game: str, tables: int, rounds: int) -> None:
    """Refuses a fault the plan cannot carry.

    :raises ValueError: naming why.
    """
    if kind not in FAULTS:
        raise ValueError(f"unknown fault {kind!r}; expected one of {', '.join(FAULTS)}")
    if kind == "tampered-deal" and (game != "paohuzi" or tables < 2):
        raise ValueError("tampered-deal needs a Paohuzi tournament with at least 2 tables")
    if kind == "wrong-seating" and (rounds < 2 or tables < 2):
        raise ValueError("wrong-seating needs at least 2 rounds and 2 tables")


def plant(kind: str, events: list[Event], rng: random.Random) -> tuple[list[Event], Planted]:
    """Returns a game's events with one fault planted in them, and where it was planted."""
    if kind == "false-result":
        planted = events[:-1] + [_false_result(events[-1])]  # type: ignore[arg-type]
        i = len(events) - 1
    elif kind == "wrong-score":
        claim = events[-1]
        assert isinstance(claim, GameEnded)
        points = list(claim.points)
        points[claim.winners[0] if claim.winners else 0] += 1
        planted, i = events[:-1] + [replace(claim, points=points)], len(events) - 1
    elif kind == "bad-move-time":
        timed = [i for i, e in enumerate(events) if isinstance(e, MoveTimeUsed)]
        i = timed[len(timed) // 2]
        planted = events[:i] + [replace(events[i], ms=events[i].ms + 7_000)] + events[i + 1:]  # type: ignore[attr-defined]
    else:
        planted, i = _out_of_turn(events, rng)
    return planted, Planted(kind, planted[i].stream, planted[i].seq)


def _false_result(claim: GameEnded) -> GameEnded:
    seats = range(len(claim.points))
    winners = [s for s in seats if s not in claim.winners] if claim.winners else [0]
    return replace(claim, winners=winners[:2] if len(claim.points) == 4 else winners[:1], points=list(reversed(claim.points)))


def _out_of_turn(events: list[Event], rng: random.Random) -> tuple[list[Event], int]:
    """Inserts a copy of a move made by another seat, out of turn, stamped with the time of the
    event before it so that no move time changes; returns the events and where it went."""
    moves = [i for i, e in enumerate(events) if e.kind in MOVE_KINDS and e.seat is not None]
    i = moves[len(moves) // 3]
    seats = len(events[0].seats)  # type: ignore[attr-defined]
    wrong = (events[i].seat + 1 + rng.randrange(seats - 1)) % seats  # type: ignore[operator]
    planted = replace(events[i], seat=wrong, ts=events[i - 1].ts)
    shifted = [replace(e, seq=e.seq + 1, **_moved_ref(e, i)) for e in events[i:]]
    return events[:i] + [planted] + shifted, i


def _moved_ref(event: Event, at: int) -> dict[str, int]:
    if isinstance(event, MoveTimeUsed) and event.move_seq is not None and event.move_seq >= at:
        return {"move_seq": event.move_seq + 1}
    return {}


def misseat(tables: list[list[str]]) -> list[list[str]]:
    """Returns the tables with the seat-0 players of the first two tables swapped."""
    fixed = [list(t) for t in tables]
    fixed[0][0], fixed[1][0] = fixed[1][0], fixed[0][0]
    return fixed


def tamper_deck(deck: list[int]) -> list[int]:
    """Returns the deck with its first two different cards swapped: a different deal for one table."""
    j = next(k for k in range(1, len(deck)) if deck[k] != deck[0])
    tampered = list(deck)
    tampered[0], tampered[j] = tampered[j], tampered[0]
    return tampered


def flip_byte(root: Path, rng: random.Random) -> int:
    """Flips one byte inside an entry covered by the newest checkpoint (the `bad-byte` fault, as an
    insider with write access would); returns that entry's index.

    :raises ValueError: when no checkpoint covers an entry.
    """
    checkpoint = newest_checkpoint(root, load_verifier(root))
    if checkpoint is None or not checkpoint.size:
        raise ValueError(f"no checkpoint of {root} covers an entry")
    index = rng.randrange(checkpoint.size)
    _, data = next(LogReader(root).entries(index, 1))
    for path in sorted((root / "segments").iterdir()):  # the insider knows the layout: the entry's bytes lie in a frame as stored
        stored = bytearray(path.read_bytes())
        at = stored.find(data)
        if at >= 0:
            stored[at + rng.randrange(len(data))] ^= 0x04
            path.write_bytes(bytes(stored))
            return index
    raise ValueError(f"entry {index} is in no segment file of {root}")
