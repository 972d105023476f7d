"""Who won a game and why, as the arbitration report opens (issue 31 point 4): one sentence with the
players' names, the termination in words, the move it ended on and the points; whether that is the
result of play or a ruling in force (with the ruling and the appeal decision behind it, as
`standings --explain` names them); why a game has no result; and a claim that differs, marked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from audit.presentation.claimed import halted_at
from audit.presentation.engine_words import rule
from audit.presentation.game_record import GameRecord
from audit.presentation.page import e
from audit.presentation.terms import term, termination
from replay.protocol import Outcome, seat_label
from replay.rulings import apply_rulings
from schemas.common import GameEnded

UNVERIFIED = "UNVERIFIED"
"""The termination of a game whose engine derived no result (the declared one stands in)."""


@dataclass
class Verdict:
    """Who won and why: the result of play, the result in force after the rulings, and where play ended or stopped."""

    derived: Outcome | None
    in_force: Outcome | None
    rulings: list[dict[str, Any]]
    """What each result-changing ruling did (replay/rulings.py), in log order."""
    end: tuple[int, int] | None
    """The seq of the event that ended the game and the moves played up to it."""
    halted: tuple[int, str] | None
    """The seq and code at which the replay stopped, where it stopped."""


def verdict(record: GameRecord, eng: Any) -> Verdict:
    """Returns the game's result of play and in force, and the step it ended or stopped at."""
    derived = eng.outcome(record.steps[-1].state)
    in_force, applied, _ = apply_rulings(record.start, derived, [s.event for s in record.steps if "set_aside" not in s.facts])
    end = halted = None
    moves = 0
    for step in record.steps:
        moves += step.facts.get("action") is not None
        if end is None and derived is not None and eng.outcome(step.state) is not None:
            end = (step.event.seq, moves)
        code = getattr(step.state, "halted", None)
        if halted is None and code is not None:
            halted = (step.event.seq, str(code))
    stop = halted_at(record.steps, eng.name) if halted is None and derived is None else None  # a Paohuzi deal whose play was refused from there on
    if stop is not None:
        halted = (record.steps[stop].event.seq, next(f.code for f in record.steps[stop].findings if f.severity == "error"))
    return Verdict(derived, in_force, applied, end, halted)


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


def _who(record: GameRecord, seats: Sequence[int], game: str) -> tuple[str, str]:
    """Returns seats as their players, with the seat: `P003（座位 0 S）`, in Chinese and English."""
    holders = {h.seat: h.holder for h in record.start.seats}
    zh = "、".join(f"{holders.get(s, '?')}（座位 {seat_label(game, s)}）" for s in seats)
    en = " and ".join(f"{holders.get(s, '?')} (seat {seat_label(game, s)})" for s in seats)
    return zh, en


def result_words(record: GameRecord, outcome: Outcome | None, game: str) -> tuple[str, str]:
    """Returns a result as a clause, Chinese and English: who won (or a draw), how, and the points."""
    if outcome is None:
        return term("not_finished", "zh"), term("not_finished", "en")
    zh_how, en_how = termination(outcome.termination, "zh"), termination(outcome.termination, "en")
    points = " : ".join(_number(p) for p in outcome.points)
    zh_pts, en_pts = (f"，得分 {points}", f"; points {points}") if points else ("", "")
    if outcome.termination == UNVERIFIED:  # the engine derived nothing: what stands is the claim
        zh, en = _who(record, outcome.winners, game) if outcome.winners else ("无胜方", "no winner")
        return (f"未验证：引擎未能推导结果，按声称结果计入（{zh}{'获胜' if outcome.winners else ''}{zh_pts}）",
                f"unverified: the engine derived no result; the claimed one stands in ({en}{' won' if outcome.winners else ''}{en_pts})")
    if not outcome.winners:
        return f"无胜方（{zh_how}）{zh_pts}", f"no winner ({en_how}){en_pts}"
    zh, en = _who(record, outcome.winners, game)
    return f"{zh}获胜（{zh_how}）{zh_pts}", f"{en} won ({en_how}){en_pts}"


def _both(pair: tuple[str, str]) -> str:
    """Returns a Chinese and English pair as HTML: the Chinese, the English under it."""
    return f"{e(pair[0])}<br><span lang='en'>{e(pair[1])}</span>"


def _sentence(record: GameRecord, v: Verdict, game: str) -> tuple[str, str]:
    """Returns the report's opening sentence, Chinese and English: the result in force, where the
    game ended, and on what it rests (play, or the rulings that changed it)."""
    if v.rulings:
        zh, en = result_words(record, v.in_force, game)
        chain_zh = "；".join(_ruling_words(record, r)[0] for r in v.rulings)
        chain_en = "; ".join(_ruling_words(record, r)[1] for r in v.rulings)
        played_zh, played_en = result_words(record, v.derived, game)
        return (f"生效结果：{zh}。依据 {chain_zh}；对局推导结果为 {played_zh}。",
                f"Result in force: {en}, by {chain_en}; the result of play was {played_en}.")
    if v.derived is None:
        last = record.steps[-1].event.seq
        if v.halted:
            seq, code = v.halted
            return (f"未终局：重放在 seq {seq} 处因 {code}（{rule(code) or ''}）停止。",
                    f"Not finished: the replay stopped at seq {seq} by {code}.")
        return f"未终局：记录到 seq {last} 为止，没有终局。", f"Not finished: the record ends at seq {last} without an end."
    zh, en = result_words(record, v.derived, game)
    if v.derived.termination == UNVERIFIED:
        at_zh, at_en = ((f"；检查于第 {v.end[1]} 手（seq {v.end[0]}）停止", f"; the check stopped at move {v.end[1]} (seq {v.end[0]})")
                        if v.end else ("", ""))
        return f"结果：{zh}{at_zh}。", f"Result: {en}{at_en}."
    at_zh, at_en = (f"，于第 {v.end[1]} 手（seq {v.end[0]}）终局", f" at move {v.end[1]} (seq {v.end[0]})") if v.end else ("", "")
    return f"推导结果：{zh}{at_zh}。", f"Derived result: {en}{at_en}."


def _ruling_words(record: GameRecord, applied: dict[str, Any]) -> tuple[str, str]:
    """Returns one ruling of the chain: its seq, kind, arbiter and the appeal it carries out."""
    ev = next((s.event for s in record.steps if s.event.seq == applied["seq"]), None)
    appeal = getattr(ev, "appeal", None)
    by = f"，仲裁员 {applied['arbiter']}" if applied.get("arbiter") else ""
    by_en = f" by {applied['arbiter']}" if applied.get("arbiter") else ""
    carried = (f"，执行申诉决定 {appeal.stream}#{appeal.seq}", f", carrying out appeal decision {appeal.stream}#{appeal.seq}") if appeal else ("", "")
    zh, en = term(applied["ruling"], "zh"), term(applied["ruling"], "en")
    return f"裁决 seq {applied['seq']}（{zh}{by}{carried[0]}）", f"ruling seq {applied['seq']} ({en}{by_en}{carried[1]})"


def _claim_differs(claim: GameEnded, derived: Outcome | None) -> list[str]:
    """Returns what of a claim differs from the derived result: termination, winners, points."""
    if derived is None:
        return ["termination"]
    out = []
    if claim.termination != derived.termination:
        out.append("termination")
    if sorted(claim.winners) != sorted(derived.winners):
        out.append("winners")
    if [float(p) for p in claim.points] != [float(p) for p in derived.points]:
        out.append("points")
    return out


DIFFERS = {"termination": "终局方式 termination", "winners": "胜方 winners", "points": "得分 points"}


def summary(record: GameRecord, eng: Any) -> str:
    """Returns the opening sentence (who won, how, where, on what it rests) and the result table."""
    start, game = record.start, eng.name
    v = verdict(record, eng)
    zh, en = _sentence(record, v, game)
    unverified = v.derived is not None and v.derived.termination == UNVERIFIED  # the claim stands in: nothing to compare it with
    differs = _claim_differs(record.claim, v.derived) if record.claim is not None and not unverified else []
    if differs and v.derived is not None:  # the claim the software made is not what the rules give: said in the opening sentence too
        zh += f"软件声称的{'、'.join(DIFFERS[d].split()[0] for d in differs)}与推导不同。"
        en += f" The software's claimed {', '.join(DIFFERS[d].split()[1] for d in differs)} differ from the derived."
    where = [label.format(value) for label, value in (("第 {0} 轮 round {0}", start.round), ("第 {0} 桌 table {0}", start.table),
                                                     ("第 {0} 局 game {0}", start.game_no), ("副 board {0}", start.board)) if value is not None]
    seats = "、".join(f"座位 seat {seat_label(game, h.seat, h.holder)}" for h in sorted(start.seats, key=lambda h: h.seat))  # as every command
    first = next((f"{h.holder}（座位 {seat_label(game, h.seat)}）" for h in start.seats if h.seat == start.first), str(start.first))
    rows = [(term("seat"), e(seats)), (term("first"), e(first)), (term("derived"), _both(result_words(record, v.derived, game)))]
    if record.claim is not None:
        claim = Outcome(termination=record.claim.termination, winners=tuple(record.claim.winners),
                        points=tuple(float(p) for p in record.claim.points))
        note = (f"<br><b>≠ 与推导不同 differs: {e('、'.join(DIFFERS[d] for d in differs))}</b>" if differs
                else "<br>未验证，无从比较 unverified: nothing derived to compare it with" if unverified else "<br>＝ 与推导一致 agrees")
        rows.append((term("claimed"), _both(result_words(record, claim, game)) + note))
    if v.rulings:
        rows.append((term("in_force"), _both(result_words(record, v.in_force, game))))
    if game == "paohuzi":  # the 胡 as the final board writes it out: who, on which card, 胡息, 名堂, 囤 × 番, the groups
        from replay.paohuzi.render import win_lines

        shown = win_lines(record.steps[-1].state)
        if shown:
            rows.append(("胡牌 hu", "<br>".join(e(line) for line in shown)))
    if start.tournament:
        rows.insert(0, ("赛事 tournament", e(" · ".join([start.tournament, *where]))))
    body = "".join(f"<tr{' class=bad' if '≠' in value else ''}><th>{e(k)}</th><td>{value}</td></tr>" for k, value in rows)
    return (f"<p class='verdict' id='verdict'>{e(zh)}<br><span lang='en'>{e(en)}</span></p>"
            f"<div class='wide'><table class='result'>{body}</table></div>")
