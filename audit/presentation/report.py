"""The arbitration report of one game: an HTML page an arbitration committee can read offline and
print, with the seat legend, the derived and claimed result, every finding with its rule and a
link to its step (and the board there, the refused move dashed), appeals and rulings, a
time-per-move chart, the board at any step, the timeline, the rule profile and the proofs.

The board is drawn once (the engine's sheet) and each step is a compact frame that the page's
script composes, so a 400-event game is a page of a few hundred kilobytes."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from audit.presentation.articles import article_text
from audit.presentation.claimed import beyond_halt, claimed_boards, halted_at
from audit.presentation.engine_words import rule
from audit.presentation.game_record import GameRecord
from audit.presentation.page import e, fields, fields_text, heading, legend_table, page, profile_table, seat_css, swatch, table
from audit.presentation.render import clock, signature_status
from audit.presentation.terms import TERMINATIONS, event_kind, term, termination
from audit.presentation.timechart import time_chart
from audit.presentation.verdict import summary
from audit.query.arbitration import IGNORED, LogRulings
from audit.query.findings import finding_text
from ledger import BundleError, LogReader, check_bundle, check_output, load_verifier, prove, write_output
from replay.fold import fold_game
from replay.paohuzi.cards import card_number, names
from replay.picture import AS_CLAIMED, MARK_STYLES, Frame, Sheet, compose
from replay.protocol import RULE_BOOKS, Finding, Step, code_name
from replay.registry import engine_for, game_of
from replay.run import EveryStep, is_game_stream
from schemas.common import RULING_WORDS, GameEnded, GameStarted, MoveTimeUsed
from schemas.envelope import Event

SCRIPT = (Path(__file__).parent / "report.js").read_text(encoding="utf-8")
ARBITRATION_KINDS = ("appeal.", "game.ruling", "game.penalty")
"""Kinds of the game's own events shown under appeals and rulings (prefixes), with whatever fields
they carry; events of the tournament's stream show there when they concern the game."""
MAX_FIGURES = 12
"""Boards drawn in full under the findings (the rest are a click away in the viewer)."""


def load_game(root: Path, stream: str, appeals: list[dict[str, Any]] | None = None) -> GameRecord:
    """Replays one game of a ledger and proves its entries against the latest checkpoint; the
    game's appeals come from `appeals` (rows of `appeal_list`) or, where it has any, the projection.

    :raises ValueError: when the ledger holds no such game.
    """
    reader = LogReader(root)
    events = list(reader.events(stream))
    if not is_game_stream(events):
        raise ValueError(f"no game stream {stream!r} (a game opens with game.started)")
    start = events[0]
    assert isinstance(start, GameStarted)
    evidence = prove(root, stream)
    events, unsigned = events[:len(evidence.entries)], events[len(evidence.entries):]  # nothing unsigned counts
    steps = fold_game(events, EveryStep(), rulings=LogRulings(reader).of_stream(stream))
    claims = [e for e in events if isinstance(e, GameEnded)]
    try:
        proof_ok = f"verified: {check_bundle(evidence, load_verifier(root)).statement(evidence)}"
    except BundleError as exc:
        proof_ok = f"PROOF FAILED: {exc}"
    related = related_events(list(LogReader(root).events(start.tournament)), stream) if start.tournament else []
    if appeals is None and start.tournament and any(ev.kind == "appeal.filed" for ev in related):
        from audit.query.session import open_session  # the projection only where the game has appeals

        appeals = open_session(root, kept=True, body=False).db.run("appeal_list", tournament=start.tournament)
    mine = [a for a in appeals or [] if a["game"] == stream]
    return GameRecord(stream, start, steps, claims[-1] if claims else None, evidence, proof_ok, related, mine, unsigned)


REPORT_STAGES = 3
"""The stages of writing one game's report a progress bar counts: read and replay, draw, write."""


def write_report(root: Path, stream: str, out: Path, force: bool = False, advance: Callable[[int], None] | None = None,
                 appeals: list[dict[str, Any]] | None = None, back: str | None = None) -> GameRecord:
    """Writes the arbitration report of one game; returns what it shows. `advance` is told of each
    of the `REPORT_STAGES` stages done; `appeals` are the tournament's rows of `appeal_list`, where
    the caller has them; `back` is the tournament page the report links back to.

    :raises OutputRefused: when `out` lies in a ledger, is a link, or exists without `force`.
    """
    tick = advance or (lambda _n: None)
    check_output(out, force)
    record = load_game(root, stream, appeals)
    tick(1)
    html = render_report(record, back).encode()
    tick(1)
    write_output(out, html, force)
    tick(1)
    return record


def render_report(record: GameRecord, back: str | None = None) -> str:
    """Returns the arbitration report as one self-contained HTML page (linking back to the
    tournament page `back`)."""
    eng = engine_for(record.start)
    sheet = eng.sheet(record.steps[-1].state, [s.holder for s in sorted(record.start.seats, key=lambda h: h.seat)])
    frames, index = _frames(record.steps, eng)
    timings = [s.event for s in record.steps if isinstance(s.event, MoveTimeUsed)]
    body = [heading("仲裁报告", "Arbitration report", "top", 1), f"<p><code>{e(record.stream)}</code></p>", _nav(back),
            heading("对局与结果", "Game and result", "result"), _unsigned(record), summary(record, eng), legend_table(sheet.legend),
            heading(f"违规与问题 ({sum(len(s.findings) for s in record.steps)})", "Findings", "findings"),
            _findings(record, sheet, frames, index, eng.name),
            heading("申诉与裁决", "Appeals and rulings", "appeals"), _arbitration(record),
            heading("每步用时", "Time per move", "time"),
            time_chart(timings, sheet.legend, getattr(record.start.profile, "move_time_limit_s", None), _flagged(record.steps)),
            heading("棋盘与时间线", "Board at every step and timeline", "replay"), _viewer(sheet, frames, index, record),
            heading("规则设置", "Rule profile in force", "profile"), profile_table(record.start.profile),
            heading("记录未被篡改的证明", "Proof that the record was not altered", "proof"), _proof(record),
            sheet.page_defs(), _data(sheet, frames, index, record.steps), f"<script>{SCRIPT}</script>"]
    return page(f"仲裁报告 {record.stream}", "".join(body), seat_css(sheet.legend))


def _flagged(steps: list[Step]) -> dict[int, list[str]]:
    """Returns the codes of the findings at each seq that has any (the time chart marks their bars)."""
    out: dict[int, list[str]] = {}
    for step in steps:
        for f in step.findings:
            out.setdefault(f.seq, []).append(f.code)
    return out


def related_events(events: list[Event], stream: str) -> list[Event]:
    """Returns the events of a tournament stream that concern one game: those naming the game's
    stream in a field (an appeal filed about it), and those whose `appeal` field is the seq of
    one of them (the committee's decision on that appeal)."""
    found: list[Event] = []
    seqs: set[int] = set()
    for ev in events:
        values = fields(ev)
        if _names(values, stream) or values.get("appeal") in seqs:
            found.append(ev)
            seqs.add(ev.seq)
    return found


def _names(value: Any, stream: str) -> bool:
    """Tells whether a field value (nested lists and objects included) is, or holds, `stream`."""
    if isinstance(value, dict):
        return any(_names(v, stream) for v in value.values())
    if isinstance(value, list):
        return any(_names(v, stream) for v in value)
    return value == stream


def _nav(back: str | None) -> str:
    up = f"<a href='{e(back)}'>↑ 赛事 tournament</a>" if back else ""
    links = (("result", "结果 result"), ("findings", "问题 findings"), ("appeals", "申诉 appeals"), ("time", "用时 time"),
             ("replay", "棋盘 board"), ("profile", "规则 profile"), ("proof", "证明 proof"))
    return "<nav>" + up + "".join(f"<a href='#{a}'>{t}</a>" for a, t in links) + "</nav>"


def _frames(steps: list[Step], eng: Any) -> tuple[list[Frame], list[int]]:
    """Returns the distinct frames of the game and, per step, the index of the frame it shows: a
    step that changes no state (a move-time claim) shows the frame before it; a step with an error
    finding shows its refused event dashed on the last legal position; beyond a halted replay,
    where the engine can draw it, each move shows the board as the log claims it (not derived)."""
    frames: list[Frame] = []
    index: list[int] = []
    last_state = None
    for step, claim in zip(steps, claimed_boards(steps, eng.name)):
        refused = any(f.severity == "error" for f in step.findings)
        if claim is not None:
            if claim[1] is not None and claim[1] != frames[-1]:
                frames.append(claim[1])
            index.append(len(frames) - 1)
            continue
        if step.state is not last_state or refused or not frames:
            frame = eng.frame(step.state, step.event if refused else None)
            if not frames or frame != frames[-1]:
                frames.append(frame)
            last_state = None if refused else step.state
        index.append(len(frames) - 1)
    return frames, index


def _code(f: Finding) -> str:
    """Returns a finding's code as HTML, with the name its rules file gives it (checkers.md) beside it."""
    name = code_name(f.code)
    return e(f.code) + (f" <code>{e(name)}</code>" if name else "")


def _rule_cell(f: Finding, game: str) -> str:
    """Returns what a finding's rule says in Chinese, its article and the article's own words."""
    book = f.rule_book or RULE_BOOKS.get(game)
    quote = article_text(book, f.article)
    words = f"<q>{e(quote)}</q>" if quote else ""
    return f"{e(rule(f.code) or '')}<br><small>{e(f.article or '')} {e(book or '') if f.article else ''}</small>{words}"


def _findings(record: GameRecord, sheet: Sheet, frames: list[Frame], index: list[int], game: str) -> str:
    found = [(i, f) for i, s in enumerate(record.steps) for f in s.findings]
    if not found:
        return "<p>无违规：每个事件都符合规则 none: every event follows the rules.</p>"
    rows = "".join(f"<tr class='bad'><td><a href='#s{f.seq}'>#{f.seq}</a></td><td>{_code(f)}</td><td>{e(term(f.severity))}</td>"
                   f"<td class='rule'>{_rule_cell(f, game)}</td><td class='msg'>{e(card_names(f.message, game))}</td></tr>" for _, f in found)
    head = "<tr><th>步 seq</th><th>代码 code</th><th>级别 severity</th><th>规则与条文 rule and article</th><th>说明 message</th></tr>"
    figures = []
    past = beyond_halt(record.steps, game)  # beyond the stop a board is the log's claim, not the last legal position
    for i in sorted({i for i, f in found if f.severity == "error" and not past[i]})[:MAX_FIGURES]:
        seq = record.steps[i].event.seq
        figures.append(f"<figure id='b{seq}'>{compose(sheet, frames[index[i]], standalone=False)}<figcaption>棋盘 board at "
                       f"<a href='#s{seq}'>seq {seq}</a>：最后的合法局面，红色虚线为被拒绝的着法 the last legal position, the refused "
                       f"event dashed red</figcaption></figure>")
    return f"<div class='wide'><table class='findings'>{head}{rows}</table></div>{''.join(figures)}"


@dataclass(frozen=True)
class AtStep:
    """What `show --at` adds to the derived position: the refused event at that step with its error
    findings, or, beyond a halted replay, the board as the log claims it and the refusal that halted it."""

    refusal: Step | None
    """The step whose event the rules refused: this one, or the one that halted the replay."""
    claimed: Any = None
    """The board as the log claims it (never derived), beyond a halted replay."""
    frame: Frame | None = None
    """The claimed board's frame: its last claimed move drawn."""

    def svg(self, eng: Any, state: Any, players: Sequence[str]) -> str:
        """Returns the picture: the claimed board, else the last legal position with the refused event dashed."""
        assert self.refusal is not None
        shown = self.frame or eng.frame(state, self.refusal.event)
        return compose(eng.sheet(state, players), shown)  # the sheet (felt, board, legend) never depends on the claim

    def text(self, game: str) -> str:
        """Returns what the terminal says under the board: the refused event's findings, each with its
        rule in Chinese and the article's own words; beyond the halt, that the board is the log's claim."""
        assert self.refusal is not None
        ev = self.refusal.event
        if self.claimed is not None:
            lines = [f"{AS_CLAIMED}：重放已于 seq {ev.seq} 停止 the replay stopped at seq {ev.seq}"]
        else:
            lines = [f"被拒绝的事件 refused event: seq {ev.seq} {event_kind(ev.kind)}；"
                     "上图为之前最后的合法局面 the board above is the last legal position"]
        for f in self.refusal.findings:
            if f.severity == "error":
                quote = article_text(f.rule_book or RULE_BOOKS.get(game), f.article)
                lines.append("  " + card_names(finding_text(f), game))
                lines.append(f"  规则 rule: {rule(f.code) or f.code}" + (f"；{f.article}：「{quote}」" if quote else ""))
        return "\n".join(lines)


def at_step(events: list[Event], seq: int) -> AtStep | None:
    """Returns, for the step `seq` of a game (its events, game.started first), the refused event
    there, or the board as the log claims it beyond a halted replay; None where the step is derived.
    The whole game is replayed: whether a Paohuzi refusal stopped the replay depends on what follows."""
    game = game_of(events[0])  # type: ignore[arg-type]
    steps = list(engine_for(events[0]).replay(events))  # type: ignore[arg-type]
    at = next((i for i, s in enumerate(steps) if s.event.seq == seq), None)
    if at is None:
        return None
    claims = list(claimed_boards(steps, game))[: at + 1]
    if claims[-1] is None:
        return AtStep(steps[at]) if any(f.severity == "error" for f in steps[at].findings) else None
    halted = halted_at(steps, game)
    assert halted is not None
    frame = next((c[1] for c in reversed(claims) if c is not None and c[1] is not None), None)
    return AtStep(steps[halted], claims[-1][0], frame) if frame is not None else AtStep(steps[halted])


def _arbitration(record: GameRecord) -> str:
    """Returns the game's appeals (in time order, with window, deadline, votes and signature), then
    every appeal, decision, ruling and penalty event of the game, each with all its fields."""
    own = [s.event for s in record.steps if s.event.kind.startswith(ARBITRATION_KINDS)]
    return appeals_table(record.appeals, record.related) + arbitration_table(own + record.related)


def appeals_table(appeals: list[dict[str, Any]], related: list[Event]) -> str:
    """Returns the game's appeals in the order filed: grounds, filed, window end, in time, deadline,
    decision, the votes as a table, the arbiter and whether the decision's signature verified."""
    if not appeals:
        return ""
    votes = {ev.seq: getattr(ev, "votes", []) for ev in related if ev.kind == "appeal.decided"}
    rows = []
    for a in sorted(appeals, key=lambda a: a["filed_ts"]):
        ballot = "".join(f"<tr><td>{e(v.member)}</td><td>{e(term('vote:' + v.vote))}</td></tr>" for v in votes.get(a["decision_seq"], []))
        rows.append([f"{e(a['tournament'])}#{a['seq']}", e(a["player"]), e(a["grounds"]), e(clock(a["filed_ts"])), e(clock(a["window_end_ts"])),
                     e(term("in_time") if a["in_time"] else term("late")), e(clock(a["deadline_ts"])),
                     e(term(a["decision"]) if a["decision"] else "待裁决 awaiting decision") + f"<br>{e(clock(a['decided_ts']))}",
                     f"<table class='votes'>{ballot}</table>" if ballot else "–", e(a["arbiter"] or "–"),
                     e(signature_status(a["signature"]) or "–")])
    head = ["申诉 appeal", "申诉人 player", "理由 grounds", "提出 filed", "时限截止 window end", "是否按时 in time", "答复期限 deadline",
            "决定 decision", "表决 votes", "仲裁员 arbiter", "签名 signature"]
    return table(head, rows, "appeals")


def arbitration_table(events: list[Event]) -> str:
    """Returns events as a table of entry, clock time, kind, seat and every field of their own (a
    signature in a details block), so that a kind the report does not know still shows in full."""
    if not events:
        return "<p>无记录 none recorded.</p>"
    rows = "".join(f"<tr><td>{e(ev.stream)}#{ev.seq}</td><td>{e(clock(ev.ts))}</td><td>{e(event_kind(ev.kind))}</td>"
                   f"<td>{'' if ev.seat is None else ev.seat}</td><td>{_own_fields(ev)}</td></tr>" for ev in sorted(events, key=lambda x: x.ts))
    head = "<tr><th>记录 entry</th><th>时间 time</th><th>事件 event</th><th>座位 seat</th><th>内容 content</th></tr>"
    return f"<div class='wide'><table class='arbitration'>{head}{rows}</table></div>"


def _own_fields(ev: Event) -> str:
    values = fields(ev)
    signature = values.pop("signature", None)
    sig = f"<details><summary>签名 signature</summary><code>{e(signature)}</code></details>" if signature else ""
    return fields_text(values) + sig


def _viewer(sheet: Sheet, frames: list[Frame], index: list[int], record: GameRecord) -> str:
    controls = ("<div class='controls'><button id='prev' type='button'>◀ 上一步 prev</button><input id='step' type='range' min='0' "
                f"value='{len(index) - 1}' aria-label='step'><button id='next' type='button'>下一步 next ▶</button>"
                "<span id='steplabel'></span></div>")
    board = compose(sheet, frames[index[-1]], standalone=False, element_id="viewer")
    printed = "<p class='printonly' id='printstep'></p>"
    if sheet.width > 720:  # a wide table (Paohuzi): the timeline goes under it, at full width
        return (f"<div class='replay stacked'><div class='pane'>{controls}{board}{printed}</div>"
                f"<div class='scroll'>{_timeline(record)}</div></div>")
    columns = f"grid-template-columns:minmax(0,{sheet.width:g}px) minmax(320px,1fr)"
    return (f"<div class='replay' style='{columns}'><div class='pane'>{controls}{board}{printed}</div>"
            f"<div class='scroll'>{_timeline(record)}</div></div>")


HIDDEN_FIELDS = ("profile", "seats")
"""Fields of an event the timeline leaves to other sections (the rule profile, the seat legend)."""


CARD_RUN = re.compile(r"(?<![0-9A-Za-z])((?:[xd](?:10|[1-9]))+)(?![0-9A-Za-z])")
"""A run of Paohuzi card codes as the log writes them (`x8`, `d7d8d9`): a person reads 八, 柒捌玖."""


def card_names(text: str, game: str) -> str:
    """Returns text with Paohuzi card codes as the board names the cards (小字 一…十, 大字 壹…拾)."""
    if game != "paohuzi":
        return text
    return CARD_RUN.sub(lambda m: names(card_number(c) for c in re.findall(r"[xd](?:10|[1-9])", m.group(1))), text)


def _timeline(record: GameRecord) -> str:
    """Returns a row per event: seq, time, kind, seat, action, its own fields, and the facts the
    engine derived that changed since the row before (a counter that did not move is not repeated)."""
    t0, game = record.start.ts, game_of(record.start)
    rows = []
    shown: dict[str, Any] = {}
    past = beyond_halt(record.steps, game)
    for i, step in enumerate(record.steps):
        ev, facts = step.event, step.facts
        said = fields(ev)
        own = fields_text(_worded(_own(ev, said, str(facts.get("action") or ""), record.steps[i - 1].event.seq if i else None)))
        new = {k: v for k, v in facts.items() if k not in ("seat", "action") and (k not in said or said[k] != v) and shown.get(k, ...) != v}
        shown.update(new)
        derived = fields_text(_worded(new))
        own, derived, action = (card_names(t, game) for t in (own, derived, e(facts.get("action") or "")))
        problems = "".join(f"<br><b>{_code(f)}</b> {e(card_names(f.message, game))}" for f in step.findings)
        cls = "bad" if step.findings else "claimed" if past[i] else ""
        rows.append(f"<tr id='s{ev.seq}' data-i='{i}' data-kind='{e(ev.kind)}'{f' class={cls}' if cls else ''}><td>{ev.seq}</td>"
                    f"<td>{_since(ev.ts - t0)}</td><td>{e(event_kind(ev.kind))}</td><td>{swatch(ev.seat)}{'' if ev.seat is None else ev.seat}</td>"
                    f"<td>{action}</td><td>{own}{' | ' if own and derived else ''}{derived}{problems}</td></tr>")
    head = ("<tr><th>步 seq</th><th>时间 m:ss</th><th>事件 event</th><th>座位 seat</th><th>着法 action</th>"
            "<th>内容与推导（只列变化） fields and derived facts (changes only)</th></tr>")
    return f"<table id='timeline'>{head}{''.join(rows)}</table>"


NAMED_IN_ACTION = ("from", "to", "card")
"""Fields of an event the action column already names (a move's ends, the card played): not repeated."""


def _own(ev: Event, said: dict[str, Any], action: str, before: int | None) -> dict[str, Any]:
    """Returns the fields of its own an event's row shows: not the rule profile or the seats, none
    at its declared default (a move the platform did not make), not what its action names (a move's
    ends, a one-step path), nor a move-time claim's `move_seq` where that is the row just before."""
    words = set(re.split(r"[\s>,:;()]+", action))
    defaults = {f.encode_name: f.default for f in msgspec.structs.fields(type(ev)) if f.default is not msgspec.NODEFAULT}
    return {k: v for k, v in said.items() if k not in HIDDEN_FIELDS and not (k in NAMED_IN_ACTION and str(v) in words)
            and not (k == "path" and isinstance(v, (list, tuple)) and len(v) == 2 and {str(h) for h in v} <= words)
            and not (k in defaults and v == defaults[k]) and not (k == "move_seq" and v == before)}


def _worded(values: dict[str, Any]) -> dict[str, Any]:
    """Returns fields with each termination in words (a claim's `FLAG_CAPTURED` as 军旗被夺 flag
    captured), a ruling's kind and why it was set aside in words, and a turn that is no seat's (a
    deal or layout pending, the game over) left out."""
    out = {}
    for k, v in values.items():
        if isinstance(v, str) and v in TERMINATIONS:
            v = termination(v)
        elif k == "ruling" and v in RULING_WORDS:
            v = " ".join(RULING_WORDS[v])
        elif k == "set_aside" and v in IGNORED:
            k, v = "未计入 set aside", " ".join(IGNORED[v])
        elif k in ("to_move", "turn") and isinstance(v, int) and v < 0:
            continue
        out[k] = v
    return out


def _since(ms: int) -> str:
    """Returns the time since the game's start as m:ss.s."""
    seconds = ms / 1000
    return f"{int(seconds // 60)}:{seconds % 60:04.1f}"


def _data(sheet: Sheet, frames: list[Frame], index: list[int], steps: list[Step]) -> str:
    """Returns the frames as JSON for the viewer: per frame its cells, marks, texts and caption."""
    data = {"name": sheet.name, "ring": sheet.ring, "styles": MARK_STYLES, "slots": sheet.slots,
            "frames": [[f.cells, [[m.kind, m.path] for m in f.marks], f.texts, f.caption] for f in frames],
            "steps": [[s.event.seq, i] for s, i in zip(steps, index)]}
    text = msgspec.json.encode(data).decode().replace("</", "<\\/")
    return f"<script type='application/json' id='frames'>{text}</script>"


def _unsigned(record: GameRecord) -> str:
    """Returns the warning of a game whose last events no signed checkpoint covers yet: they are
    named by seq and kind only, left out of the replay, the result and every table."""
    if not record.unsigned:
        return ""
    first, last = record.unsigned[0].seq, record.unsigned[-1].seq
    listed = "、".join(f"seq {ev.seq} {event_kind(ev.kind)}" for ev in record.unsigned)
    return (f"<div class='bad' id='unsigned'><p>未签名记录 {len(record.unsigned)} 条（seq {first}–{last}）：最新签名检查点之后，不作为事实，"
            f"未计入本报告。<br><span lang='en'>{len(record.unsigned)} unsigned entries (seq {first}–{last}) after the newest signed "
            f"checkpoint: not certified, not shown as fact, left out of this report.</span></p>"
            f"<details><summary>列出 list</summary>{e(listed)}</details></div>")


def _proof(record: GameRecord) -> str:
    """Returns whether the game's entries were proved against the signed checkpoint, and how to check it offline."""
    entries = record.proof.entries
    ok = record.proof_ok.startswith("verified")
    said = (f"已证明：本局 {len(entries)} 条记录（日志第 {entries[0].index}–{entries[-1].index} 条）均在签名检查点之下，未被篡改。"
            if ok else "证明失败：本局记录与签名检查点不符。")
    return (f"<p{'' if ok else ' class=bad'}>{e(said)}<br><span lang='en'>{e(record.proof_ok)}; log entries "
            f"{entries[0].index}–{entries[-1].index}.</span></p><p>离线核验 Check offline with "
            f"<code>matchledger prove --stream {e(record.stream)} --out FILE</code> and "
            f"<code>matchledger check-proof FILE --key signer.pub</code>.</p>"
            f"<details><summary>签名检查点 signed checkpoint</summary><pre>{e(record.proof.checkpoint)}</pre></details>")
