"""The parts every HTML page of matchledger shares: the head (language, CJK font stack, print
layout), bilingual headings, the seat legend, the rule profile as a table, and events shown
field by field (so that kinds the report does not know, such as appeals, still show in full)."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from audit.presentation.engine_words import colour_name
from replay.picture import FONT_STACK, LegendRow
from schemas.envelope import Event

ENVELOPE = frozenset({"stream", "seq", "ts", "seat", "v"})
"""Fields every event has; a generic view shows the others."""
CSS = """*{box-sizing:border-box}
body{font-family:%(fonts)s;margin:0 auto;padding:1em 1.5em;max-width:1240px;color:#1b1b1b;line-height:1.45}
h1{font-size:1.6em;margin:.3em 0}h2{font-size:1.25em;margin:1.4em 0 .4em;border-bottom:2px solid #ddd}h2 .en,h1 .en{color:#555;font-weight:normal}
table{border-collapse:collapse;max-width:100%%}td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px;vertical-align:top;text-align:left}
th{background:#f3f3f3}.bad{background:#fde0dc}.changed{background:#fff4d6}.num{text-align:right}
tr.claimed td{background:repeating-linear-gradient(135deg,#fff,#fff 6px,#eee 6px,#eee 12px);color:#555}
.wide{overflow-x:auto;max-width:100%%}.scroll{max-height:28em;overflow:auto;border:1px solid #ddd}
svg{max-width:100%%;height:auto}p,figcaption,td.msg,td.rule,pre,code{overflow-wrap:anywhere}pre{background:#f6f6f6;padding:8px;overflow:auto;white-space:pre-wrap;word-break:break-all}
.sw{display:inline-block;width:.9em;height:.9em;border:1px solid #000;vertical-align:middle;margin-right:3px}
nav a{margin-right:1em}tr.on{outline:3px solid #f9a825}tr[data-i]{cursor:pointer}
.controls{display:flex;gap:.5em;align-items:center;margin:.4em 0}.controls input{flex:1}
figure{margin:.5em 0;break-inside:avoid}figcaption{font-size:13px;color:#333}
.verdict{font-size:1.15em;font-weight:600;margin:.4em 0}.verdict span{font-weight:normal;color:#333;font-size:.9em}
td q{display:block;color:#444;font-size:12px;margin-top:2px}td q:before{content:"「"}td q:after{content:"」"}
table.votes td{border:0;padding:0 4px}.printonly{display:none}
.replay{display:grid;gap:12px;align-items:start}.replay>.pane{position:sticky;top:0;background:#fff}.replay .scroll{max-height:calc(100vh - 2em)}
@media (max-width:1000px){.replay{display:block}.replay>.pane{position:static}.controls{flex-wrap:wrap}.controls input{min-width:100%%;order:3}}
@media (max-width:700px){.pane,figure{overflow-x:auto}.pane svg.board,figure svg.board{max-width:none}}
.replay.stacked{display:block}.replay.stacked>.pane{position:static}
@media print{body{max-width:none;padding:0;font-size:11pt}.printonly{display:block}
#timeline td,#timeline th{font-size:8pt;padding:0 3px;line-height:1.2}nav,.controls,.noprint{display:none}.replay{display:block}
.scroll,.replay .scroll{max-height:none;overflow:visible;border:0}.replay>.pane{position:static}.wide{overflow:visible}h2{break-after:avoid}
tr{break-inside:avoid}svg{max-height:24cm}a{color:inherit;text-decoration:none}}
""" % {"fonts": FONT_STACK}


def e(value: Any) -> str:
    """Returns a value as escaped HTML text."""
    return html.escape(str(value))


def heading(zh: str, en: str, anchor: str, level: int = 2) -> str:
    """Returns a bilingual heading: the Chinese term, then the English one."""
    return f'<h{level} id="{anchor}">{e(zh)} <span class="en" lang="en">{e(en)}</span></h{level}>'


def page(title: str, body: str, extra_css: str = "") -> str:
    """Returns a whole self-contained page in Simplified Chinese and English; printed, each sheet
    carries the title as a running header and its page number."""
    head = (f"<meta charset='utf-8'><meta name='viewport' content='width=device-width,initial-scale=1'>"
            f"<title>{e(title)}</title><style>{CSS}{_print_margins(title)}{extra_css}</style>")
    return f"<!doctype html><html lang='zh-Hans'><head>{head}</head><body>{body}</body></html>"


def _print_margins(title: str) -> str:
    """Returns the printed sheet's margin boxes: the title top left, `page n / N` bottom right."""
    quoted = title.replace("\\", "\\\\").replace('"', '\\"').replace("<", "\\3C ")
    return ('@page{margin:14mm 12mm;@top-left{content:"%s";font-size:9pt;color:#444}'
            '@bottom-right{content:"第 " counter(page) " / " counter(pages) " 页 page";font-size:9pt;color:#444}}' % quoted)


def table(header: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "") -> str:
    """Returns a table of already escaped cells under a header of plain text."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<div class='wide'><table class='{cls}'><tr>{head}</tr>{body}</table></div>"


def seat_css(legend: Sequence[LegendRow]) -> str:
    """Returns the CSS classes `c0`, `c1` … of the seats' colours, for swatches in tables."""
    return "".join(f".c{r.seat}{{background:{r.colour}}}" for r in legend)


def swatch(seat: int | None) -> str:
    """Returns a seat's colour swatch (empty for no seat)."""
    return "" if seat is None else f"<i class='sw c{seat}'></i>"


def legend_table(legend: Sequence[LegendRow]) -> str:
    """Returns the legend: colour (in words) ↔ seat ↔ compass letter (or role) ↔ player."""
    rows = [(f"{swatch(r.seat)}{e(colour_name(r.colour))}", str(r.seat), e(r.letter), e(r.holder or "–")) for r in legend]
    return table(["颜色 colour", "座位 seat", "方位 letter", "选手 player"], rows, "legend")


def fields(event: Event) -> dict[str, Any]:
    """Returns an event's own fields (not the envelope's), as plain values."""
    return {k: v for k, v in msgspec.to_builtins(event).items() if k not in ENVELOPE and k != "kind"}


def show(value: Any) -> str:
    """Returns a field's value as short text: 是/否 for booleans, – for none, lists joined (a list of
    pairs as `S11 营长, S12 连长`), other nested values as JSON."""
    if isinstance(value, bool):
        return "是" if value else "否"
    if value is None:
        return "–"
    if isinstance(value, (list, tuple)) and all(_is_flat(v) for v in value):
        return ", ".join(" ".join(show(x) for x in v) if isinstance(v, (list, tuple)) else show(v) for v in value)
    if isinstance(value, (dict, list, tuple)):
        return msgspec.json.encode(value).decode()
    return str(value)


def _is_flat(value: Any) -> bool:
    """Tells whether a value is a scalar or a list of scalars (a pair such as a point and a piece)."""
    if isinstance(value, (list, tuple)):
        return all(not isinstance(v, (dict, list, tuple)) for v in value)
    return not isinstance(value, dict)


def fields_text(values: dict[str, Any]) -> str:
    """Returns fields as escaped `name: value` text, one after the other."""
    return "; ".join(f"{e(k)}: {e(show(v))}" for k, v in values.items() if v is not None and v != [])


def profile_rows(profile: msgspec.Struct, prefix: str = "") -> list[tuple[str, Any, Any]]:
    """Returns every setting of a rule profile as (name, value, default), nested settings flattened
    as `points.win`."""
    rows: list[tuple[str, Any, Any]] = []
    for f in msgspec.structs.fields(profile):
        value = getattr(profile, f.name)
        if isinstance(value, msgspec.Struct):
            rows += profile_rows(value, f"{prefix}{f.name}.")
            continue
        default = f.default if f.default is not msgspec.NODEFAULT else (
            f.default_factory() if f.default_factory is not msgspec.NODEFAULT else None)
        rows.append((prefix + f.name, value, default))
    return rows


def profile_table(profile: msgspec.Struct) -> str:
    """Returns the rule profile as a table; a setting that differs from its default is marked."""
    body = "".join(
        f"<tr{' class=changed' if value != default else ''}><td><code>{e(name)}</code></td><td>{e(show(msgspec.to_builtins(value)))}</td>"
        f"<td>{e(show(msgspec.to_builtins(default)))}</td></tr>" for name, value, default in profile_rows(profile))
    head = "<tr><th>设置 setting</th><th>本局 in force</th><th>默认 default</th></tr>"
    return f"<div class='wide'><table class='profile'>{head}{body}</table></div>"
