"""Pictures of a paohuzi table: SVG and text, for everyone or from one seat (face-down groups hidden)."""

from __future__ import annotations

from html import escape

from replay.paohuzi.cards import cards_of, is_red, names
from replay.paohuzi.melds import KIND_NAMES, Group, group_huxi
from replay.paohuzi.rules import current_seat
from replay.paohuzi.state import SEATS, State

HIDDEN = "▢"


def shown_cards(group: Group, owner: int, viewer: int | None) -> list[int | None]:
    """Returns a group's cards as `viewer` sees them (None = face down): 偎 all down, 臭偎 and 提
    one up (§3); the owner and the all-seeing view see everything."""
    if viewer is None or viewer == owner:
        return list(group.cards)
    if group.kind == "wei":
        return [None] * len(group.cards)
    if group.kind in ("chou_wei", "ti"):
        return [group.cards[0]] + [None] * (len(group.cards) - 1)
    return list(group.cards)


def _seat_line(state: State, seat: int, viewer: int | None) -> str:
    role = "庄" if seat == state.dealer else "闲"
    hand = state.hands[seat] if state.hands else ()
    if viewer is None or viewer == seat:
        held = names(cards_of(hand)) if hand else "-"
    else:
        held = f"[{sum(hand)} cards]"
    groups = " · ".join(
        f"{KIND_NAMES[g.kind]} " + "".join(HIDDEN if c is None else names([c]) for c in shown_cards(g, seat, viewer))
        for g in state.melds[seat]
    ) or "-"
    visible = [g for g in state.melds[seat] if viewer in (None, seat) or g.kind != "wei"]
    huxi = sum(group_huxi(g, state.profile.huxi_table) for g in visible)
    discards = names(state.discards[seat]) or "-"
    return f"seat {seat} ({role}) hand: {held} | groups: {groups} | 胡息 {huxi} | discards: {discards}"


def render_text(state: State, seat: int | None = None) -> str:
    """Draws the table as text: a header, one line per seat, the card on offer and the result."""
    actor = current_seat(state)
    lines = [
        f"paohuzi {state.stream} — {state.phase}"
        + (f", seat {actor} to act" if actor is not None else "")
        + f"; wall {state.wall_left}; 亮张 {names([state.liangzhang]) if state.liangzhang is not None else '-'}"
        + (f"; view of seat {seat}" if seat is not None else "")
    ]
    if state.hands:
        lines.extend(_seat_line(state, s, seat) for s in range(SEATS))
    if state.pending is not None:
        where = "wall card of" if state.pending.from_wall else "discard of"
        lines.append(f"on offer: {names([state.pending.card])} ({where} seat {state.pending.owner})")
    if state.win is not None:
        r = state.win.result
        on = f" on {names([state.win.card])}" if state.win.card is not None else " on its own cards"
        lines.append(f"胡 by seat {state.win.seat}{on}: {r.huxi} 胡息, 名堂 {[n for n, _ in r.mingtang] or '-'}, "
                     f"{r.score.tun} 囤 × {r.score.fan} 番, S = {r.score.s}")
        lines.append("  " + " · ".join(f"{KIND_NAMES[g.kind]} {names(g.cards)}" for g in r.groups))
    if state.exhausted:
        lines.append("荒庄 (wall exhausted)")
    return "\n".join(lines)


_W, _CW, _CH = 980, 26, 36


def _card(x: int, y: int, card: int | None) -> str:
    if card is None:
        return f'<rect x="{x}" y="{y}" width="{_CW - 2}" height="{_CH}" rx="3" fill="#6b7b8c" stroke="#333"/>'
    colour = "#c0392b" if is_red(card) else "#222"
    return (
        f'<rect x="{x}" y="{y}" width="{_CW - 2}" height="{_CH}" rx="3" fill="#fdf6e3" stroke="#333"/>'
        f'<text x="{x + _CW // 2 - 1}" y="{y + 24}" font-size="17" text-anchor="middle" fill="{colour}">{names([card])}</text>'
    )


def _row(x: int, y: int, cards: list[int | None]) -> list[str]:
    return [_card(x + i * _CW, y, c) for i, c in enumerate(cards)]


def render_svg(state: State, seat: int | None = None) -> str:
    """Draws the table as SVG: per seat its hand (hidden from other views), its groups face up or
    down as the rules say, its discard row; the wall count, the 亮张 and the card on offer."""
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{90 + 150 * SEATS}" font-family="sans-serif">',
             f'<rect width="{_W}" height="{90 + 150 * SEATS}" fill="#2e6b3f"/>']
    header = escape(render_text(state, seat).splitlines()[0])
    parts.append(f'<text x="10" y="22" font-size="14" fill="#fff">{header}</text>')
    if state.liangzhang is not None:
        parts.append('<text x="10" y="60" font-size="14" fill="#fff">亮张</text>')
        parts.extend(_row(50, 34, [state.liangzhang]))
    parts.append(f'<text x="100" y="60" font-size="14" fill="#fff">wall {state.wall_left}</text>')
    if state.pending is not None:
        parts.append('<text x="190" y="60" font-size="14" fill="#fff">on offer</text>')
        parts.extend(_row(255, 34, [state.pending.card]))
    for s in range(SEATS if state.hands else 0):
        y = 80 + 150 * s
        role = "庄" if s == state.dealer else "闲"
        parts.append(f'<text x="10" y="{y + 20}" font-size="14" fill="#fff">seat {s} ({role})</text>')
        hand: list[int | None] = list(cards_of(state.hands[s]))
        parts.extend(_row(110, y, hand if seat in (None, s) else [None] * len(hand)))
        x = 110
        for g in state.melds[s]:
            parts.extend(_row(x, y + 44, shown_cards(g, s, seat)))
            parts.append(f'<text x="{x}" y="{y + 96}" font-size="11" fill="#fff">{KIND_NAMES[g.kind]}</text>')
            x += _CW * len(g.cards) + 8
        parts.append(f'<text x="10" y="{y + 124}" font-size="12" fill="#fff">discards</text>')
        parts.extend(_row(110, y + 102, list(state.discards[s])))
    parts.append("</svg>")
    return "\n".join(parts)


TEXT_LEGEND = (
    f"legend: 一…十 small cards (小字), 壹…拾 big cards (大字); 庄 the dealer, 闲 the others; {HIDDEN} a face-down card;\n"
    "        groups 吃 碰 偎 臭偎 跑 提 (坎 three alike dealt to one hand); 胡息 of the groups this view sees;\n"
    "        seats are numbered 0–2 in turn order (tournament.md §1a)"
)
"""What the text table's words and signs mean."""


def render_board(state: State, seat: int | None = None) -> str:
    """Returns the text table for people: the seats' lines and a legend."""
    return render_text(state, seat).rstrip("\n") + "\n" + TEXT_LEGEND + "\n"
