"""The arbitration report of one game: an HTML page an arbitration committee can read offline, with
the derived and claimed result, every finding with its rule, the timeline, a time-per-move chart,
the board after every action, and the inclusion proofs of the game's entries."""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledger import BundleError, EvidenceBundle, check_bundle, check_output, load_verifier, prove, read_stream_events, write_output
from replay.protocol import Step, seat_label
from replay.registry import engine
from replay.run import is_game_stream
from schemas.common import GameEnded, GameStarted, MoveTimeUsed

SEAT_COLOURS = ("#c62828", "#1565c0", "#2e7d32", "#ef6c00")
CSS = """body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px;vertical-align:top}.bad{background:#fde0dc}
details{margin:4px 0}summary{cursor:pointer}pre{background:#f6f6f6;padding:8px;overflow:auto}"""


@dataclass
class GameRecord:
    """Everything the report shows about one game."""

    stream: str
    start: GameStarted
    steps: list[Step]
    claim: GameEnded | None
    proof: EvidenceBundle
    proof_ok: str


def load_game(root: Path, stream: str) -> GameRecord:
    """Replays one game of a ledger and proves its entries against the latest checkpoint.

    :raises ValueError: when the ledger holds no such game.
    """
    events = read_stream_events(root, stream)
    if not is_game_stream(events):
        raise ValueError(f"no game stream {stream!r} (a game opens with game.started)")
    start = events[0]
    assert isinstance(start, GameStarted)
    steps = list(engine(str(start.profile.__struct_config__.tag)).replay(events))  # type: ignore[attr-defined]
    claims = [e for e in events if isinstance(e, GameEnded)]
    evidence = prove(root, stream)
    try:
        proof_ok = f"verified: {check_bundle(evidence, load_verifier(root)).statement(evidence)}"
    except BundleError as exc:
        proof_ok = f"PROOF FAILED: {exc}"
    return GameRecord(stream, start, steps, claims[-1] if claims else None, evidence, proof_ok)


def render_report(record: GameRecord) -> str:
    """Returns the arbitration report as one self-contained HTML page."""
    eng = engine(str(record.start.profile.__struct_config__.tag))  # type: ignore[attr-defined]
    parts = [f"<h1>Arbitration report: {_e(record.stream)}</h1>", _summary(record, eng), _findings(record),
             "<h2>Time per move</h2>", _time_chart(record), "<h2>Timeline and board after every action</h2>",
             _timeline(record, eng), "<h2>Proof that the record was not altered</h2>", _proof(record)]
    head = f"<meta charset='utf-8'><title>{_e(record.stream)}</title><style>{CSS}</style>"
    return f"<!doctype html><html><head>{head}</head><body>{''.join(parts)}</body></html>"


def write_report(root: Path, stream: str, out: Path, force: bool = False) -> GameRecord:
    """Writes the arbitration report of one game; returns what it shows.

    :raises OutputRefused: when `out` lies in a ledger, is a link, or exists without `force`.
    """
    check_output(out, force)
    record = load_game(root, stream)
    write_output(out, render_report(record).encode(), force)
    return record


def _e(value: Any) -> str:
    return html.escape(str(value))


def _summary(record: GameRecord, eng: Any) -> str:
    start = record.start
    outcome = eng.outcome(record.steps[-1].state)
    seats = ", ".join(f"seat {seat_label(eng.name, s.seat, s.holder)}" for s in start.seats)  # escaped with the row
    derived = f"{outcome.termination}, winners {list(outcome.winners)}, points {list(outcome.points)}" if outcome else "not finished"
    claimed = f"{record.claim.termination}, winners {record.claim.winners}, points {record.claim.points}" if record.claim else "none"
    rows = [("tournament", f"{start.tournament} round {start.round} table {start.table} game {start.game_no} board {start.board}"),
            ("seats", seats), ("first to move", f"seat {start.first}"), ("derived result", derived), ("claimed result", claimed)]
    cls = "" if record.claim is None or (outcome and record.claim.termination == outcome.termination
                                          and sorted(record.claim.winners) == sorted(outcome.winners)) else " class='bad'"
    body = "".join(f"<tr{cls if k == 'claimed result' else ''}><th>{k}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f"<table>{body}</table><details><summary>rule profile</summary><pre>{_e(start.profile)}</pre></details>"


def _findings(record: GameRecord) -> str:
    found = [f for s in record.steps for f in s.findings]
    if not found:
        return "<h2>Findings</h2><p>None: every event follows the rules.</p>"
    rows = "".join(f"<tr class='bad'><td>{f.seq}</td><td>{_e(f.code)}</td><td>{_e(f.article or '')}</td><td>{_e(f.severity)}</td>"
                   f"<td>{_e(f.message)}</td></tr>" for f in found)
    return f"<h2>Findings ({len(found)})</h2><table><tr><th>seq</th><th>code</th><th>article</th><th>severity</th><th>message</th></tr>{rows}</table>"


def _time_chart(record: GameRecord, width: int = 1000, height: int = 160) -> str:
    """An SVG bar per timed move, coloured by seat, height by the time the player used."""
    timings = [s.event for s in record.steps if isinstance(s.event, MoveTimeUsed)]
    if not timings:
        return "<p>No timing events.</p>"
    top = max(t.ms for t in timings) or 1
    bar = width / len(timings)
    bars = "".join(
        f"<rect x='{i * bar:.1f}' y='{height - t.ms / top * height:.1f}' width='{max(bar - 1, 1):.1f}' height='{t.ms / top * height:.1f}' "
        f"fill='{SEAT_COLOURS[(t.seat or 0) % 4]}'><title>seq {t.move_seq}: seat {t.seat}, {t.ms} ms</title></rect>"
        for i, t in enumerate(timings))
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height + 20}'>{bars}"
            f"<text x='0' y='{height + 15}' font-size='12'>longest {top / 1000:.1f} s; {len(timings)} timed moves</text></svg>")


def _timeline(record: GameRecord, eng: Any) -> str:
    t0 = record.start.ts
    rows = []
    for step in record.steps:
        e, facts = step.event, step.facts
        cls = " class='bad'" if step.findings else ""
        action = facts.get("action")
        board = f"<details><summary>board</summary>{eng.render_svg(step.state)}</details>" if action is not None else ""
        shown = ", ".join(f"{k}={v}" for k, v in facts.items() if k not in ("seat", "action") and v is not None)
        rows.append(f"<tr{cls}><td>{e.seq}</td><td>{(e.ts - t0) / 1000:.1f}s</td><td>{_e(e.kind)}</td><td>{'' if e.seat is None else e.seat}</td>"
                    f"<td>{_e(action or '')}</td><td>{_e(shown)}{''.join(f'<br><b>{_e(f.code)}</b> {_e(f.message)}' for f in step.findings)}</td>"
                    f"<td>{board}</td></tr>")
    head = "<tr><th>seq</th><th>time</th><th>event</th><th>seat</th><th>action</th><th>derived facts</th><th>position</th></tr>"
    return f"<table>{head}{''.join(rows)}</table>"


def _proof(record: GameRecord) -> str:
    entries = record.proof.entries
    return (f"<p>{_e(record.proof_ok)}; log entries {entries[0].index}–{entries[-1].index}. Check offline with "
            f"<code>matchledger prove --stream {_e(record.stream)} --out FILE</code> and "
            f"<code>matchledger check-proof FILE --key signer.pub</code>.</p><pre>{_e(record.proof.checkpoint)}</pre>")
