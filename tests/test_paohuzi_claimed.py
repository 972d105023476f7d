"""A Paohuzi deal beyond the refused action that stopped its replay (issue 31 point 6): the table as
the log claims it (hands, groups and discard rows moved as each event says, the claimed 胡), every
such table captioned as not derived, in `show --at` (text and SVG) and in the report's viewer; and
`show --at` the refused action itself draws it dashed and names the finding. The faults are made by
editing the golden deal's events (tests/data/paohuzi/golden.jsonl)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import schemas
from replay.paohuzi import ENGINE, PROFILES
from replay.paohuzi.cards import card_id, card_number, names
from replay.paohuzi.render import as_claimed, claimed_table, settled, stopped_at
from replay.picture import AS_CLAIMED
from replay.protocol import Step
from schemas.paohuzi import Drawn, Hu, LiangzhangRevealed
from tests.ledger_support import cli
from tests.paohuzi_support import start_event

GOLDEN = Path(__file__).resolve().parent / "data" / "paohuzi" / "golden.jsonl"
STREAM = "pz-r1-t1-g1"
Line = dict[str, Any]


def _replay(lines: list[Line]) -> list[Step]:
    return list(ENGINE.replay([schemas.decode(json.dumps(line, ensure_ascii=False).encode()) for line in lines]))


def _seat_line(board: str, seat: int) -> str:
    return next(line for line in board.splitlines() if line.startswith(f"seat {seat} ("))


def _discard_not_held(lines: list[Line], steps: list[Step]) -> tuple[list[Line], Callable[[str], bool]]:
    """A discard of a card its seat does not hold (第七条), the log going on as if it had been made:
    the card lies in the seat's discard row as claimed."""
    i = next(i for i, line in enumerate(lines) if line["kind"] == "paohuzi.discarded" and i > 30)
    seat = lines[i]["seat"]
    card = next(c for c, n in enumerate(steps[i - 1].state.hands[seat]) if n == 0)
    lines[i] = {**lines[i], "card": card_id(card)}
    return lines, lambda board: names([card]) in _seat_line(board, seat).split("discards: ")[1]


def _peng_without_pair(lines: list[Line], steps: list[Step]) -> tuple[list[Line], Callable[[str], bool]]:
    """A 碰 by a seat without a pair of the card (第七条), where the log had it pass: the seat's
    groups hold the 碰 as claimed."""
    i = next(i for i, line in enumerate(lines) if line["kind"] == "paohuzi.passed" and line["card"] and i > 30
             and steps[i - 1].state.hands[line["seat"]][card_number(line["card"])] < 2)
    lines[i] = {**lines[i], "kind": "paohuzi.peng"}
    seat, group = lines[i]["seat"], f"碰 {names([card_number(lines[i]['card'])] * 3)}"
    return lines, lambda board: group in _seat_line(board, seat).split("groups: ")[1]


def _false_hu(lines: list[Line], steps: list[Step]) -> tuple[list[Line], Callable[[str], bool]]:
    """A 胡 the rules refuse (第八条), claimed with its groups, 胡息, 名堂 and score, and a game.ended on it."""
    i = next(i for i, line in enumerate(lines) if line["kind"] == "paohuzi.discarded" and i > 30)
    seat, ts = lines[i]["seat"], lines[i]["ts"]
    hu = {"kind": "paohuzi.hu", "stream": STREAM, "seq": i, "ts": ts, "seat": seat, "v": 1, "card": None, "huxi": 33,
          "mingtang": ["红胡"], "score": 24, "groups": [{"kind": "peng", "cards": ["x3", "x3", "x3"]}]}
    points = [-12] * 3
    points[seat] = 24
    ended = {"kind": "game.ended", "stream": STREAM, "seq": i + 1, "ts": ts, "seat": None, "v": 1, "termination": "HU",
             "winners": [seat], "points": points}
    said = f"所称之胡 claimed hu：座位 seat {seat} 自摸 on its own cards；33 胡息；名堂 红胡；局分 deal score 24"
    return lines[:i] + [hu, ended], lambda board: said in board and "所称组牌 claimed groups：碰 三三三" in board


FAULTS: dict[str, Callable[[list[Line], list[Step]], tuple[list[Line], Callable[[str], bool]]]] = {
    "discard-not-held": _discard_not_held, "peng-without-pair": _peng_without_pair, "false-hu": _false_hu}


Faulty = tuple[Path, list[Step], int, Callable[[str], bool]]


@pytest.fixture(scope="module", params=list(FAULTS))
def faulty(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Faulty:
    """Returns a ledger holding the golden deal with one fault, its steps, where the replay stopped
    deriving the log, and a check of the text table for what the log claims there."""
    lines = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines()]
    lines, shows = FAULTS[request.param](lines, _replay(lines))
    steps = _replay(lines)
    halt = stopped_at(steps)
    assert halt is not None, request.param
    root = tmp_path_factory.mktemp(request.param) / "ledger"
    assert cli("init", "--ledger", str(root)).exit_code == 0
    made = cli("record", "--ledger", str(root), "-", input="\n".join(json.dumps(x, ensure_ascii=False) for x in lines).encode())
    assert made.exit_code == 0, made.output
    return root, steps, halt, shows


def test_show_at_the_refused_action_draws_it_and_names_the_finding(faulty: Faulty, tmp_path: Path) -> None:
    """Issue 31 point 6 (last sentence), Paohuzi: `show --at` the refused action draws the last legal
    table with the action named in the caption (its card dashed beside the seat) and names the finding."""
    root, steps, halt, _ = faulty
    seq = steps[halt].event.seq
    found = next(f for f in steps[halt].findings if f.severity == "error")
    svg = tmp_path / "at.svg"
    shown = cli("show", "--ledger", str(root), "--game", STREAM, "--at", str(seq), "--svg", str(svg))
    assert shown.exit_code == 0, shown.output
    assert f"error {found.code}" in shown.stdout and "被拒绝的事件 refused event" in shown.stdout and AS_CLAIMED not in shown.stdout
    picture = svg.read_text()
    assert "被拒绝的动作 refused 座位 seat" in picture and AS_CLAIMED not in picture
    assert picture.count('class="mark mark-illegal"') == (1 if getattr(steps[halt].event, "card", None) else 0)
    said = json.loads(cli("show", "--ledger", str(root), "--game", STREAM, "--at", str(seq), "--json").stdout)
    assert [f["code"] for f in said["refused"]] == [found.code] and not said["as_claimed"]


def test_show_beyond_the_stop_is_the_table_as_the_log_claims(faulty: Faulty, tmp_path: Path) -> None:
    """Issue 31 point 6, Paohuzi: `show --at` the last event beyond a refused action the log went on
    from shows the table as the log claims it (the refused action and every later one taken as
    stated), says so in the text and the SVG, and names the finding that stopped the replay."""
    root, steps, halt, shows = faulty
    last, seq = steps[-1].event.seq, steps[halt].event.seq
    svg = tmp_path / "claimed.svg"
    shown = cli("show", "--ledger", str(root), "--game", STREAM, "--at", str(last), "--svg", str(svg))
    assert shown.exit_code == 0, shown.output
    board = shown.stdout.split("legend")[0]
    assert f"— {AS_CLAIMED}" in board and shows(board), board
    found = next(f for f in steps[halt].findings if f.severity == "error")
    assert f"{AS_CLAIMED}：重放已于 seq {seq} 停止" in shown.stdout and f"error {found.code}" in shown.stdout
    picture = svg.read_text()
    assert f'aria-label="{AS_CLAIMED}: seq ' in picture and "mark-illegal" not in picture
    said = json.loads(cli("show", "--ledger", str(root), "--game", STREAM, "--at", str(last), "--json").stdout)
    assert said["as_claimed"] and said["refused"] == []
    derived = ENGINE.render_board(steps[-1].state)
    assert board.split("\n", 3)[3] != derived, "the claimed table is not the derived one"
    seat = cli("show", "--ledger", str(root), "--game", STREAM, "--at", str(last), "--seat", "0")
    assert seat.exit_code == 0 and f"— {AS_CLAIMED}" in seat.stdout and "view of seat 0" in seat.stdout


def test_report_viewer_beyond_the_stop_shows_the_claimed_tables(faulty: Faulty, tmp_path: Path) -> None:
    """Issue 31 point 6, Paohuzi: in the report (read without a browser) the step of the refused
    action shows it dashed on the last legal table; every step after it shows a table as the log
    claims it, captioned as not derived, the last one what the claim rests on; the summary says
    where and by which finding the replay stopped (point 4: "not finished" says why)."""
    root, steps, halt, _ = faulty
    out = tmp_path / "r.html"
    assert cli("report", "--ledger", str(root), "--game", STREAM, "--out", str(out)).exit_code == 0
    page = out.read_text(encoding="utf-8")
    data = json.loads(page.split("<script type='application/json' id='frames'>")[1].split("</script>")[0].replace("<\\/", "</"))
    frames, index = data["frames"], [f for _, f in data["steps"]]
    refused = frames[index[halt]]
    assert not refused[3].startswith(AS_CLAIMED) and "被拒绝的动作 refused" in refused[3]
    assert all(not frames[f][3].startswith(AS_CLAIMED) for f in index[:halt + 1]), "derived up to the refusal"
    beyond = index[halt + 1:]
    assert beyond and all(frames[f][3].startswith(AS_CLAIMED) for f in beyond), "every table beyond the stop says it is not derived"
    if isinstance(steps[halt].event, Hu):
        assert any(t[2].startswith("所称之胡 claimed hu") for t in frames[beyond[-1]][2]), "the claimed 胡 the result rests on"
    else:
        assert frames[beyond[-1]][0] != frames[index[halt]][0], "the claimed actions moved cards"
        assert any(kind == "last" for f in beyond for kind, _ in frames[f][1]), "the card a claimed action moved is ringed"
    assert page.count("class=claimed") + page.count("class=bad") >= len(steps) - halt - 1
    assert f"<figure id='b{steps[halt].event.seq}'>" in page and page.count("<figure id='b") == 1, \
        "the board at a finding is the last legal position: none is drawn for the findings beyond the stop"
    code = next(f.code for f in steps[halt].findings if f.severity == "error")
    assert f"the replay stopped at seq {steps[halt].event.seq} by {code}" in page, "the summary says why the deal has no result"


def test_a_deal_whose_play_goes_on_derived_has_no_claim() -> None:
    """Issue 31 point 6, Paohuzi: a refused action the log then ignores (a discard sent again out of
    turn, as the simulator's illegal-move plants it) does not stop the replay: play goes on derived."""
    lines = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines()]
    i = next(i for i, line in enumerate(lines) if line["kind"] == "paohuzi.discarded" and i > 30)
    copy = {**lines[i], "seat": (lines[i]["seat"] + 1) % 3}
    lines = lines[:i] + [copy] + [{**x, "seq": x["seq"] + 1, **({"move_seq": x["move_seq"] + 1} if x.get("move_seq") is not None
                                                                  and x["move_seq"] >= i else {})} for x in lines[i:]]
    steps = _replay(lines)
    assert any(f.severity == "error" for f in steps[i].findings) and stopped_at(steps) is None


def test_a_legal_deal_taken_as_claimed_is_the_derived_table() -> None:
    """Issue 31 point 6: taking a legal log at its word from any step moves the cards as the rules
    do: before every draw the claimed hands, groups and discard rows are the derived ones (the
    forced actions the rules made before a log shows them are not made twice)."""
    for n in range(12):
        profile = sorted(PROFILES)[n % len(PROFILES)]
        print(f"profile={profile} seed={1000 + n}")
        steps = list(ENGINE.replay(ENGINE.bot_game(start_event(profile, stream=f"c{n}", dealer=n % 3), random.Random(1000 + n))))
        liang = next(i for i, s in enumerate(steps) if isinstance(s.event, LiangzhangRevealed))
        for k in range(liang, len(steps) - 1, 5):
            table = claimed_table(steps, k)
            for j in range(k + 1, len(steps) - 1):
                table = as_claimed(table, steps[j].event) or table
                if isinstance(steps[j + 1].event, Drawn):
                    derived, claimed = steps[j].state, settled(table.state)
                    assert (claimed.hands, claimed.discards) == (derived.hands, derived.discards), (n, k, j)
                    assert [sorted(m) for m in claimed.melds] == [sorted(m) for m in derived.melds], (n, k, j)
