"""Issue 31 points 1 and 2: every finding message the three engines emit is read by a referee in
Chinese first, with the English beside, and no internal representation reaches it (no JSON lists,
tuple reprs, True/False/None, enum names or card codes). The messages are gathered from each game's
golden playthrough broken many ways (a seat changed, events swapped, dropped, doubled or cut off, a
timestamp turned back, fields altered), from the simulator's `--inject` faults and from rulings that
cannot apply; the test fails when a message breaks the convention or when too few codes were reached."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

import schemas
from audit.simulator.faults import EVENT_FAULTS, plant
from replay.paohuzi.deals import check_board_deals
from replay.protocol import Finding
from replay.run import replay_game
from replay.values import TERMINATION_WORDS
from schemas.common import GameStarted
from schemas.envelope import Event
from schemas.paohuzi import BoardCreated, Dealt

DATA = Path(__file__).parent / "data"
GOLDEN = {"checkers": DATA / "checkers" / "golden-seed-3.jsonl", "junqi": DATA / "junqi" / "golden_seed7.jsonl",
          "paohuzi": DATA / "paohuzi" / "golden.jsonl"}
LEAST_CODES = {"checkers": 17, "junqi": 18, "paohuzi": 25}
"""How many distinct codes each game's broken logs must reach, so that the check covers the engine."""
VARIANTS: dict[str, dict[str, Any]] = {
    "checkers": {"side_triangles": "forbidden", "goal_lock": "across_turns", "path_revisit_policy": "error",
                 "on_illegal_move": "flag_and_apply", "leave_camp_penalty": "flag", "reentry_own_home_after_deadline": "illegal",
                 "resign_allowed": False, "move_time_limit_s": 5},
    "junqi": {"illegal_layout_policy": "flag_and_continue", "illegal_move_policy": "flag_and_skip"},
    "paohuzi": {"hu_optional": False, "hu_on_discard": True},
}
"""Profile settings that reach more of each engine's rules: the golden log is broken under them too."""
SEED = 20261204
STRANGE = ["x3", "d9", "S51", "营长", "司令", "x", "HU", "FLAG_CAPTURED", "WALL_EXHAUSTED", "ALL_HOME", "ABANDONED"]

CJK_FIRST = re.compile(r"^[\u3400-\u9fff]")
FORBIDDEN = {
    "a JSON list": re.compile(r"\[\s*[-\d'\"]"),
    "a tuple repr": re.compile(r"\((?:'[^']*'|\"[^\"]*\"|-?\d+(?:\.\d+)?), "),
    "True/False/None": re.compile(r"\b(?:True|False|None)\b"),
    "an enum name": re.compile(r"\b(?:[A-Z]+_[A-Z_]+|" + "|".join(TERMINATION_WORDS) + r")\b"),
    "a card code": re.compile(r"\b[xd]\d+\b"),
    "a seat that is no seat": re.compile(r"(?:座位|seat )[-−]\d"),
}


def problems(message: str) -> list[str]:
    """Returns what is wrong with a finding message for a person: not Chinese first, or an internal representation."""
    found = [] if CJK_FIRST.match(message) else ["not Chinese first"]
    return found + [name for name, pattern in FORBIDDEN.items() if pattern.search(message)]


def _load(game: str) -> list[Event]:
    return [schemas.decode(line) for line in GOLDEN[game].read_bytes().splitlines() if line.strip()]


def _renumbered(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for seq, event in enumerate(raw):
        event["seq"] = seq
    return raw


def _altered(event: dict[str, Any], rng: random.Random) -> None:
    """Changes an event's own fields: numbers up by one, cards and names to strange values."""
    for key, value in list(event.items()):
        if key in ("kind", "stream", "seq", "ts", "v", "seat"):
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            event[key] = value + 1
        elif isinstance(value, list) and value and all(isinstance(x, int) for x in value):
            event[key] = [x + 1 for x in value]
        elif isinstance(value, str):
            event[key] = rng.choice(STRANGE)


def _misplaced(pieces: list[list[str]], rng: random.Random) -> list[list[str]]:
    """Returns a Junqi layout with two pieces' kinds swapped, or one point used twice, or a piece short (第四条, 第六条)."""
    pieces = [list(p) for p in pieces]
    a, b = rng.sample(range(len(pieces)), 2)
    how = rng.randrange(3)
    if how == 0:
        pieces[a][1], pieces[b][1] = pieces[b][1], pieces[a][1]
    elif how == 1:
        pieces[a][0] = pieces[b][0]
    else:
        del pieces[a]
    return pieces


def broken_logs(events: list[Event], rng: random.Random, ways: tuple[int, ...] = tuple(range(9))) -> Iterator[list[Event]]:
    """Yields the game's log broken each of `ways` at each event, and the simulator's planted faults."""
    raw = [msgspec.json.decode(msgspec.json.encode(e)) for e in events]
    yield list(events)
    for i in range(1, len(raw)):
        for way in (*ways, *[8] * 12 * ("pieces" in raw[i])):  # a layout is broken a dozen ways more
            log = [dict(e) for e in raw]
            if way == 0 and log[i].get("seat") is not None:
                log[i]["seat"] = (log[i]["seat"] + 1) % 4
            elif way == 1 and i + 1 < len(log):
                log[i], log[i + 1] = log[i + 1], log[i]
                _renumbered(log)
            elif way == 2:
                log[i]["ts"] = log[i - 1]["ts"] - 5
            elif way == 3:
                del log[i]
                _renumbered(log)
            elif way == 4:
                log.insert(i, dict(log[i]))
                _renumbered(log)
            elif way == 5:
                _altered(log[i], rng)
            elif way == 6:
                log = log[:i] + [{**log[i], "seat": 7}] if "seat" in log[i] else log[:i]
            elif way == 7 and "to" in log[i]:
                key = rng.choice(["from", "to"])
                log[i][key] = rng.choice([e[key] for e in raw if key in e])
            elif way >= 8 and "pieces" in log[i]:
                log[i]["pieces"] = _misplaced(log[i]["pieces"], rng)
            try:
                yield [schemas.decode(msgspec.json.encode(e)) for e in log]
            except msgspec.ValidationError:
                continue  # a change the schema refuses never reaches an engine
    for fault in sorted(EVENT_FAULTS):
        yield plant(fault, list(events), rng)[0]
    end = events[-1]
    unusable: list[list[int | float] | None] = [[1] * 7, None]  # seven points for a smaller game; a correction without points
    for points in unusable:
        ruling = schemas.common.Ruling(stream=end.stream, seq=end.seq + 1, ts=end.ts + 1, seat=None, corrects=end.seq,
                                       text="t", ruling="score_correction", points=points)
        yield [*events, ruling]


def findings_of(game: str) -> list[Finding]:
    """Returns every finding of the game's broken logs (and, for Paohuzi, of a second table's differing deal)."""
    rng = random.Random(SEED)
    print(f"seed {SEED}")
    found: list[Finding] = []
    events = _load(game)
    for log in broken_logs(events, rng):
        found.extend(replay_game(log).findings)
    start = events[0]
    assert isinstance(start, GameStarted)
    variant = msgspec.structs.replace(start, profile=msgspec.structs.replace(start.profile, **VARIANTS[game]))
    for log in broken_logs([variant, *events[1:]], rng, ways=(5, 7, 8)):
        found.extend(replay_game(log).findings)
    if game == "paohuzi":
        found.extend(check_board_deals([events, [_other_table(e) for e in events]]))
    return found


def _other_table(event: Event) -> Event:
    """Returns an event of a second table of the same board that tells a different board, dealer and hands (第五条)."""
    if isinstance(event, BoardCreated):
        return msgspec.structs.replace(event, board=event.board + "-b", commitment="0" * 64)
    if isinstance(event, Dealt):
        return msgspec.structs.replace(event, dealer=(event.dealer + 1) % 3, hands=[*event.hands[1:], event.hands[0]])
    return event


@pytest.mark.parametrize("game", sorted(GOLDEN))
def test_every_finding_message_is_chinese_first_without_internal_representations(game: str) -> None:
    """Issue 31 points 1 and 2: each message of the game's findings is zh-Hans first with the English
    beside, and shows no JSON list, tuple, True/False/None, enum name or card code."""
    found = findings_of(game)
    bad = sorted({f"{f.code}: {', '.join(problems(f.message))}: {f.message}" for f in found if problems(f.message)})
    assert not bad, "\n".join(bad[:20])
    codes = {f.code for f in found}
    assert len(codes) >= LEAST_CODES[game], sorted(codes)


@pytest.mark.parametrize("message, expected", [
    ("claimed points [-26, 53, -26], derived [0, 0, 0]", ["not Chinese first", "a JSON list"]),
    ("申报 ('E11', '营长')", ["a tuple repr"]),
    ("申报胜方 None", ["True/False/None"]),
    ("申报终局方式为 FLAG_CAPTURED", ["an enum name"]),
    ("申报终局方式为 HU", ["an enum name"]),
    ("摸到 x8 drew d9", ["a card code"]),
    ("轮到座位-1 it is seat -1's turn", ["a seat that is no seat"]),
    ("申报得分与推导不符：座位1 53、座位2 −26 claimed points differ: seat 1 53, seat 2 -26", []),
    ("座位0走 S31>CSW 不合法 illegal move S31>CSW (3-3>5-9) by seat 0", []),
])
def test_the_message_check_itself(message: str, expected: list[str]) -> None:
    """Issue 31 point 2: the check above finds each kind of internal representation and passes a good message."""
    assert problems(message) == expected


def test_a_claimed_score_names_each_seat_and_its_points() -> None:
    """Issue 31 points 1 and 2 (跑胡子第十条, 第十一条): a claim whose points differ from the derived ones
    says so in Chinese, then English, each seat with its points, not as JSON lists."""
    events = _load("paohuzi")
    claim = events[-1]
    assert isinstance(claim, schemas.common.GameEnded)
    wrong = msgspec.structs.replace(claim, points=[p * 2 for p in claim.points])
    (finding,) = [f for f in replay_game([*events[:-1], wrong]).findings if f.code == "paohuzi.E01"]
    derived = ", ".join(f"seat {s} {int(p)}" for s, p in enumerate(claim.points))
    assert finding.message.startswith("申报得分与推导不符：申报 座位0 ")
    assert finding.message.endswith(f"claimed points {', '.join(f'seat {s} {int(p) * 2}' for s, p in enumerate(claim.points))}, "
                                    f"derived {derived}")
    assert not problems(finding.message)


def test_the_engines_termination_words_are_the_dictionarys() -> None:
    """Issue 31 point 3 (one dictionary of terms): a termination in an engine's finding message reads as
    it does on the pages and the terminal (audit/presentation/terms.py), in Chinese and in English."""
    from audit.presentation.terms import TERMINATIONS

    differ = {name: (words, TERMINATIONS[name][:2]) for name, words in TERMINATION_WORDS.items()
              if name in TERMINATIONS and words != TERMINATIONS[name][:2]}
    assert differ == {}
    assert set(TERMINATIONS) <= set(TERMINATION_WORDS)
