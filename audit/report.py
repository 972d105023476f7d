"""The arbitration report of one game: an HTML page an arbitration committee can read offline and
print, with the seat legend, the derived and claimed result, every finding with its rule and a
link to its step (and the board there, the refused move dashed), appeals and rulings, a
time-per-move chart, the board at any step, the timeline, the rule profile and the proofs.

The board is drawn once (the engine's sheet) and each step is a compact frame that the page's
script composes, so a 400-event game is a page of a few hundred kilobytes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from audit.page import e, fields, fields_text, heading, legend_table, page, profile_table, seat_css, swatch
from audit.timechart import time_chart
from ledger import BundleError, EvidenceBundle, check_bundle, check_output, load_verifier, prove, read_stream_events, write_output
from replay.picture import MARK_STYLES, Frame, Sheet, compose
from replay.protocol import Finding, Step, code_name, seat_label
from replay.registry import engine
from replay.run import is_game_stream
from schemas.common import GameEnded, GameStarted, MoveTimeUsed
from schemas.envelope import Event

SCRIPT = (Path(__file__).parent / "report.js").read_text(encoding="utf-8")
ARBITRATION_KINDS = ("appeal.", "game.ruling", "game.penalty")
"""Kinds of the game's own events shown under appeals and rulings (prefixes), with whatever fields
they carry; events of the tournament's stream show there when they concern the game."""
MAX_FIGURES = 12
"""Boards drawn in full under the findings (the rest are a click away in the viewer)."""


@dataclass
class GameRecord:
    """Everything the report shows about one game."""

    stream: str
    start: GameStarted
    steps: list[Step]
    claim: GameEnded | None
    proof: EvidenceBundle
    proof_ok: str
    related: list[Event]
    """Events of the game's tournament stream that name the game (appeals, rulings filed there)."""


def load_game(root: Path, stream: str) -> GameRecord:
    """Replays one game of a ledger and proves its entries against the latest checkpoint.

    :raises ValueError: when the ledger holds no such game.
    """
    events = read_stream_events(root, stream)
    if not is_game_stream(events):
        raise ValueError(f"no game stream {stream!r} (a game opens with game.started)")
    start = events[0]
    assert isinstance(start, GameStarted)
    steps = list(engine(_game(start)).replay(events))
    claims = [e for e in events if isinstance(e, GameEnded)]
    evidence = prove(root, stream)
    try:
        proof_ok = f"verified: {check_bundle(evidence, load_verifier(root)).statement(evidence)}"
    except BundleError as exc:
        proof_ok = f"PROOF FAILED: {exc}"
    related = related_events(read_stream_events(root, start.tournament), stream) if start.tournament else []
    return GameRecord(stream, start, steps, claims[-1] if claims else None, evidence, proof_ok, related)


REPORT_STAGES = 3
"""The stages of writing one game's report a progress bar counts: read and replay, draw, write."""


def write_report(root: Path, stream: str, out: Path, force: bool = False, advance: Callable[[int], None] | None = None) -> GameRecord:
    """Writes the arbitration report of one game; returns what it shows. `advance` is told of each
    of the `REPORT_STAGES` stages done.

    :raises OutputRefused: when `out` lies in a ledger, is a link, or exists without `force`.
    """
    tick = advance or (lambda _n: None)
    check_output(out, force)
    record = load_game(root, stream)
    tick(1)
    html = render_report(record).encode()
    tick(1)
    write_output(out, html, force)
    tick(1)
    return record


def render_report(record: GameRecord) -> str:
    """Returns the arbitration report as one self-contained HTML page."""
    eng = engine(_game(record.start))
    sheet = eng.sheet(record.steps[-1].state, [s.holder for s in sorted(record.start.seats, key=lambda h: h.seat)])
    frames, index = _frames(record.steps, eng)
    timings = [s.event for s in record.steps if isinstance(s.event, MoveTimeUsed)]
    body = [heading("仲裁报告", "Arbitration report", "top", 1), f"<p><code>{e(record.stream)}</code></p>", _nav(),
            heading("对局与结果", "Game and result", "result"), _summary(record, eng), legend_table(sheet.legend),
            heading(f"违规与问题 ({sum(len(s.findings) for s in record.steps)})", "Findings", "findings"),
            _findings(record, sheet, frames, index),
            heading("申诉与裁决", "Appeals and rulings", "appeals"), _arbitration(record),
            heading("每步用时", "Time per move", "time"),
            time_chart(timings, sheet.legend, getattr(record.start.profile, "move_time_limit_s", None)),
            heading("棋盘与时间线", "Board at every step and timeline", "replay"), _viewer(sheet, frames, index, record),
            heading("规则设置", "Rule profile in force", "profile"), profile_table(record.start.profile),
            heading("记录未被篡改的证明", "Proof that the record was not altered", "proof"), _proof(record),
            sheet.page_defs(), _data(sheet, frames, index, record.steps), f"<script>{SCRIPT}</script>"]
    return page(f"仲裁报告 {record.stream}", "".join(body), seat_css(sheet.legend))


def _game(start: GameStarted) -> str:
    return str(start.profile.__struct_config__.tag)  # type: ignore[attr-defined]


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


def _nav() -> str:
    links = (("result", "结果 result"), ("findings", "问题 findings"), ("appeals", "申诉 appeals"), ("time", "用时 time"),
             ("replay", "棋盘 board"), ("profile", "规则 profile"), ("proof", "证明 proof"))
    return "<nav>" + "".join(f"<a href='#{a}'>{t}</a>" for a, t in links) + "</nav>"


def _frames(steps: list[Step], eng: Any) -> tuple[list[Frame], list[int]]:
    """Returns the distinct frames of the game and, per step, the index of the frame it shows: a
    step that changes no state (a move-time claim) shows the frame before it; a step with an error
    finding shows its refused event dashed on the last legal position."""
    frames: list[Frame] = []
    index: list[int] = []
    last_state = None
    for step in steps:
        refused = any(f.severity == "error" for f in step.findings)
        if step.state is not last_state or refused or not frames:
            frame = eng.frame(step.state, step.event if refused else None)
            if not frames or frame != frames[-1]:
                frames.append(frame)
            last_state = None if refused else step.state
        index.append(len(frames) - 1)
    return frames, index


def _summary(record: GameRecord, eng: Any) -> str:
    start = record.start
    outcome = eng.outcome(record.steps[-1].state)
    derived = f"{outcome.termination}, winners {list(outcome.winners)}, points {list(outcome.points)}" if outcome else "not finished 未终局"
    claimed = f"{record.claim.termination}, winners {record.claim.winners}, points {record.claim.points}" if record.claim else "none 无"
    agrees = record.claim is None or (outcome is not None and record.claim.termination == outcome.termination
                                      and sorted(record.claim.winners) == sorted(outcome.winners))
    where = [f"{name} {value}" for name, value in (("round", start.round), ("table", start.table), ("game", start.game_no),
                                                   ("board", start.board)) if value is not None]
    seats = ", ".join(f"seat {seat_label(eng.name, s.seat, s.holder)}" for s in start.seats)  # escaped with the row
    rows = [("赛事 tournament", " · ".join([start.tournament or "single game 单局", *where])), ("席位 seats", seats),
            ("先行 first to move", f"seat {start.first}"), ("推导结果 derived result", derived), ("声称结果 claimed result", claimed)]
    body = "".join(f"<tr{' class=bad' if k.startswith('声称') and not agrees else ''}><th>{k}</th><td>{e(v)}</td></tr>" for k, v in rows)
    return f"<div class='wide'><table>{body}</table></div>"


def _code(f: Finding) -> str:
    """Returns a finding's code as HTML, with the name its rules file gives it (checkers.md) beside it."""
    name = code_name(f.code)
    return e(f.code) + (f" <code>{e(name)}</code>" if name else "")


def _findings(record: GameRecord, sheet: Sheet, frames: list[Frame], index: list[int]) -> str:
    found = [(i, f) for i, s in enumerate(record.steps) for f in s.findings]
    if not found:
        return "<p>无 None: every event follows the rules.</p>"
    rows = "".join(f"<tr class='bad'><td><a href='#s{f.seq}'>#{f.seq}</a></td><td>{_code(f)}</td><td>{e(f.article or '')}</td>"
                   f"<td>{e(f.severity)}</td><td>{e(f.message)}</td></tr>" for _, f in found)
    head = "<tr><th>步 seq</th><th>代码 code</th><th>条款 article</th><th>级别 severity</th><th>说明 message</th></tr>"
    figures = []
    for i in sorted({i for i, f in found if f.severity == "error"})[:MAX_FIGURES]:
        seq = record.steps[i].event.seq
        figures.append(f"<figure id='b{seq}'>{compose(sheet, frames[index[i]], standalone=False)}<figcaption>棋盘 board at "
                       f"<a href='#s{seq}'>seq {seq}</a>: the last legal position, the refused event dashed red</figcaption></figure>")
    return f"<div class='wide'><table class='findings'>{head}{rows}</table></div>{''.join(figures)}"


def _arbitration(record: GameRecord) -> str:
    """Returns every appeal, decision, ruling and penalty of the game, each with all its fields."""
    own = [s.event for s in record.steps if s.event.kind.startswith(ARBITRATION_KINDS)]
    return arbitration_table(own + record.related, record.start.ts)


def arbitration_table(events: list[Event], t0: int) -> str:
    """Returns events as a table of entry, time since `t0`, kind, seat and every field of their own,
    so that a kind the report does not know still shows in full."""
    if not events:
        return "<p>无 None recorded.</p>"
    rows = "".join(f"<tr><td>{e(ev.stream)}#{ev.seq}</td><td>{(ev.ts - t0) / 1000:+.1f}s</td><td>{e(ev.kind)}</td>"
                   f"<td>{'' if ev.seat is None else ev.seat}</td><td>{fields_text(fields(ev))}</td></tr>" for ev in events)
    head = "<tr><th>记录 entry</th><th>时间 time</th><th>事件 event</th><th>座位 seat</th><th>内容 content</th></tr>"
    return f"<div class='wide'><table class='arbitration'>{head}{rows}</table></div>"


def _viewer(sheet: Sheet, frames: list[Frame], index: list[int], record: GameRecord) -> str:
    controls = ("<div class='controls'><button id='prev' type='button'>◀ 上一步 prev</button><input id='step' type='range' min='0' "
                f"value='{len(index) - 1}' aria-label='step'><button id='next' type='button'>下一步 next ▶</button>"
                "<span id='steplabel'></span></div>")
    board = compose(sheet, frames[index[-1]], standalone=False, element_id="viewer")
    columns = f"grid-template-columns:minmax(0,{sheet.width:g}px) minmax(320px,1fr)"
    return f"<div class='replay' style='{columns}'><div class='pane'>{controls}{board}</div><div class='scroll'>{_timeline(record)}</div></div>"


def _timeline(record: GameRecord) -> str:
    t0 = record.start.ts
    rows = []
    for i, step in enumerate(record.steps):
        ev, facts = step.event, step.facts
        said = fields(ev)
        own = fields_text({k: v for k, v in said.items() if k not in ("profile", "seats")})
        derived = fields_text({k: v for k, v in facts.items() if k not in ("seat", "action") and (k not in said or said[k] != v)})
        problems = "".join(f"<br><b>{_code(f)}</b> {e(f.message)}" for f in step.findings)
        rows.append(f"<tr id='s{ev.seq}' data-i='{i}' data-kind='{e(ev.kind)}'{' class=bad' if step.findings else ''}><td>{ev.seq}</td>"
                    f"<td>{(ev.ts - t0) / 1000:.1f}</td><td>{e(ev.kind)}</td><td>{swatch(ev.seat)}{'' if ev.seat is None else ev.seat}</td>"
                    f"<td>{e(facts.get('action') or '')}</td><td>{own}{' | ' if own and derived else ''}{derived}{problems}</td></tr>")
    head = ("<tr><th>步 seq</th><th>秒 s</th><th>事件 event</th><th>座位 seat</th><th>着法 action</th>"
            "<th>内容与推导 fields and derived facts</th></tr>")
    return f"<table id='timeline'>{head}{''.join(rows)}</table>"


def _data(sheet: Sheet, frames: list[Frame], index: list[int], steps: list[Step]) -> str:
    """Returns the frames as JSON for the viewer: per frame its cells, marks, texts and caption."""
    data = {"name": sheet.name, "ring": sheet.ring, "styles": MARK_STYLES, "slots": sheet.slots,
            "frames": [[f.cells, [[m.kind, m.path] for m in f.marks], f.texts, f.caption] for f in frames],
            "steps": [[s.event.seq, i] for s, i in zip(steps, index)]}
    text = msgspec.json.encode(data).decode().replace("</", "<\\/")
    return f"<script type='application/json' id='frames'>{text}</script>"


def _proof(record: GameRecord) -> str:
    entries = record.proof.entries
    return (f"<p>{e(record.proof_ok)}; log entries {entries[0].index}–{entries[-1].index}. Check offline with "
            f"<code>matchledger prove --stream {e(record.stream)} --out FILE</code> and "
            f"<code>matchledger check-proof FILE --key signer.pub</code>.</p><pre>{e(record.proof.checkpoint)}</pre>")
