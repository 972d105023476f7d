"""Pictures of a paohuzi table: SVG and text, for everyone or from one seat (face-down groups hidden)."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from replay.paohuzi.cards import N_VALUES, card_number, cards_of, is_red, names
from replay.paohuzi.melds import KIND_NAMES, Group, group_huxi
from replay.paohuzi.rules import current_seat
from replay.paohuzi.state import SEATS, State
from replay.picture import EMPTY, Frame, LegendRow, Mark, Sheet, compose, key, legend_svg
from schemas.envelope import Event

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
        lines.append(f"胡 by seat {state.win.seat}{on}: {r.huxi} 胡息, 名堂 {'、'.join(n for n, _ in r.mingtang) or '-'}, "
                     f"{r.score.tun} 囤 × {r.score.fan} 番, S = {r.score.s}")
        lines.append("  " + " · ".join(f"{KIND_NAMES[g.kind]} {names(g.cards)}" for g in r.groups))
    if state.exhausted:
        lines.append("荒庄 (wall exhausted)")
    return "\n".join(lines)


def win_lines(state: State) -> list[str]:
    """Returns the 胡 of a finished deal as people read it, Chinese with English beside: who, on
    which card, 胡息, 名堂, 囤 × 番 and the score; then the decomposition. Empty before a 胡."""
    if state.win is None:
        return ["荒庄 wall exhausted: no 胡, a draw"] if state.exhausted else []
    w, r = state.win, state.win.result
    on = f"胡 {names([w.card])}" if w.card is not None else "自摸 on its own cards"
    source = "" if w.card is None else "（摸牌 from the wall）" if w.from_wall else f"（座位 {w.owner} 打出 discarded by seat {w.owner}）"
    mingtang = "、".join(f"{n} {v}" for n, v in r.mingtang) or "无 none"
    head = (f"胡 hu：座位 seat {w.seat} {on}{source}；{r.huxi} 胡息；名堂 {mingtang}；"
            f"{r.score.tun} 囤 × {r.score.fan} 番 = {r.score.s}")
    return [head, "组牌 groups：" + " · ".join(f"{KIND_NAMES[g.kind]} {names(g.cards)}" for g in r.groups)]


_W, _CW, _CH = 1000, 26, 36
_X0, _ROW, _HAND, _LONG = 110, 150, 24, 34
"""Card rows start at x = 110; a seat's rows take 150 px; a hand row holds 24 cards, a group or
discard row 34 (so the table never outgrows 1,000 px)."""
_RESULT = 56
"""The band under the seats where the 胡 of a finished deal is written out."""
SEAT_COLOURS = ("#d7301f", "#74add1", "#fee090")
"""Red, light blue and yellow: apart in lightness (grayscale print, colour-blind eyes) and each
clear on the green felt; every seat's marker also carries its number, so colour is never the only mark."""
PALETTE = {SEAT_COLOURS[0]: ("红", "red"), SEAT_COLOURS[1]: ("浅蓝", "light blue"), SEAT_COLOURS[2]: ("黄", "yellow")}
"""Each colour in words, Chinese and English (the legends name colours, not codes)."""
LIANG_SLOT, OFFER_SLOT = 0, 1


def _slot_xy(x: int, y: int, i: int) -> tuple[float, float]:
    """Returns the centre of the i-th card of a row whose first card's corner is (x, y)."""
    return x + i * _CW + (_CW - 2) / 2, y + _CH / 2


def _seat_y(seat: int) -> int:
    return 80 + _ROW * seat


def _height() -> int:
    return 90 + _ROW * SEATS + _RESULT


@functools.cache
def _slots() -> tuple[tuple[float, float], ...]:
    """Returns the slots: the 亮张 and the card on offer, then per seat its hand row, its attempt
    slot (a refused card), its group row and its discard row."""
    out = [_slot_xy(50, 34, 0), _slot_xy(255, 34, 0)]
    for s in range(SEATS):
        y = _seat_y(s)
        out += [_slot_xy(_X0, y, i) for i in range(_HAND)]
        out.append(_slot_xy(_X0 + (_HAND + 1) * _CW + 30, y, 0))
        out += [_slot_xy(_X0, y + 44, i) for i in range(_LONG)]
        out += [_slot_xy(_X0, y + 102, i) for i in range(_LONG)]
    return tuple(out)


def _seat_slots(seat: int) -> tuple[int, int, int, int]:
    """Returns the first slot of a seat's hand, its attempt slot, and the first of its groups and discards."""
    hand = 2 + seat * (_HAND + 1 + 2 * _LONG)
    return hand, hand + _HAND, hand + _HAND + 1, hand + _HAND + 1 + _LONG


def _card_symbol(card: int | None) -> str:
    corner = f'x="{-(_CW - 2) / 2:g}" y="{-_CH / 2:g}" width="{_CW - 2}" height="{_CH}" rx="3" stroke="#333"'
    if card is None:
        return f'<rect {corner} fill="#6b7b8c"/>'
    colour = "#c0392b" if is_red(card) else "#222"
    return f'<rect {corner} fill="#fdf6e3"/><text y="6" font-size="17" text-anchor="middle" fill="{colour}">{names([card])}</text>'


def legend(state: State, players: Sequence[str] = ()) -> tuple[LegendRow, ...]:
    """Returns the legend: each seat's colour, number, role (庄 dealer, 闲 the others) and holder."""
    return tuple(LegendRow(SEAT_COLOURS[s], s, f"{'庄 dealer' if s == state.dealer else '闲'} {PALETTE[SEAT_COLOURS[s]][0]}",
                           players[s] if s < len(players) else "") for s in range(SEATS))


def sheet(state: State, players: Sequence[str] = ()) -> Sheet:
    """Returns the table drawn once: the felt, the row labels of each seat, the legend, and a symbol
    per card (and the back of a face-down card)."""
    height = _height()
    parts = [f'<rect width="{_W}" height="{height}" fill="#2e6b3f"/>',
             '<text x="10" y="60" font-size="14" fill="#fff">亮张</text>', '<text x="190" y="60" font-size="14" fill="#fff">on offer</text>']
    for s in range(SEATS):
        y = _seat_y(s)
        parts.append(f'<rect x="8" y="{y + 26}" width="18" height="18" fill="{SEAT_COLOURS[s]}" stroke="#fff"/>'
                     f'<text x="17" y="{y + 39}" font-size="12" font-weight="bold" text-anchor="middle" fill="#000">{s}</text>')
        parts += [f'<text x="30" y="{y + dy}" font-size="12" fill="#fff">{label}</text>'
                  for dy, label in ((40, "手牌 hand"), (66, "组 groups"), (124, "弃 discards"))]
    parts.append(f'<g transform="translate(800 0)"><rect width="200" height="{16 * SEATS + 24}" fill="#fff" opacity="0.9"/>'
                 f'{legend_svg(legend(state, players), 6, 16)}</g>')
    symbols = tuple(_card_symbol(c) for c in (*range(N_VALUES), None))
    return Sheet("paohuzi", _W, height, "".join(parts), symbols, _slots(), legend(state, players), ring=22)


def _attempted_card(event: Event | None) -> int | None:
    card = getattr(event, "card", None)
    return card_number(card) if isinstance(card, str) and event is not None and event.seat is not None else None


def frame(state: State, seat: int | None = None, attempt: Event | None = None) -> Frame:
    """Returns the table as a frame: hands (face down to other views), groups face up or down as
    the rules say, discard rows, the 亮张 and the card on offer, and `attempt` (a card action the
    rules refused) dashed beside its seat's hand."""
    cells = [EMPTY] * len(_slots())
    back = key(N_VALUES)

    def lay(first: int, cards: Sequence[int | None], room: int) -> None:
        for i, c in enumerate(cards[:room]):
            cells[first + i] = back if c is None else key(c)

    if state.liangzhang is not None:
        cells[LIANG_SLOT] = key(state.liangzhang)
    if state.pending is not None:
        cells[OFFER_SLOT] = key(state.pending.card)
    header = render_text(state, seat).splitlines()[0]
    texts = [(10.0, 22.0, header), (100.0, 60.0, f"wall {state.wall_left}")]
    for s in range(SEATS if state.hands else 0):
        hand_at, _, groups_at, discards_at = _seat_slots(s)
        texts.append((10.0, _seat_y(s) + 20.0, f"seat {s} ({'庄' if s == state.dealer else '闲'})"))
        hand: list[int | None] = list(cards_of(state.hands[s]))
        lay(hand_at, hand if seat in (None, s) else [None] * len(hand), _HAND)
        at = 0
        for g in state.melds[s]:
            lay(groups_at + at, shown_cards(g, s, seat), _LONG - at)
            texts.append((_slots()[groups_at + min(at, _LONG - 1)][0] - 11, _seat_y(s) + 96.0, KIND_NAMES[g.kind]))
            at += len(g.cards) + 1
        lay(discards_at, list(state.discards[s]), _LONG)
    texts += [(10.0, _height() - _RESULT + 20.0 + 20 * i, line) for i, line in enumerate(win_lines(state))]
    marks: tuple[Mark, ...] = ()
    caption = " · ".join([header, *win_lines(state)[:1]])
    card = _attempted_card(attempt)
    if card is not None and attempt is not None and attempt.seat is not None and attempt.seat < SEATS:
        slot = _seat_slots(attempt.seat)[1]
        cells[slot] = key(card)
        marks = (Mark("illegal", (slot,)),)
        caption += f"; refused {attempt.kind} {names([card])} by seat {attempt.seat}"
    return Frame("".join(cells), marks, tuple(texts), caption)


def render_svg(state: State, seat: int | None = None, players: Sequence[str] = ()) -> str:
    """Draws the table as SVG: per seat its hand (hidden from other views), its groups face up or
    down as the rules say, its discard row; the wall count, the 亮张, the card on offer and the legend."""
    return compose(sheet(state, players), frame(state, seat))


TEXT_LEGEND = (
    f"legend: 一…十 small cards (小字), 壹…拾 big cards (大字); 庄 the dealer, 闲 the others; {HIDDEN} a face-down card;\n"
    "        groups 吃 碰 偎 臭偎 跑 提 (坎 three alike dealt to one hand); 胡息 of the groups this view sees;\n"
    "        seats are numbered 0–2 in turn order (tournament.md §1a)"
)
"""What the text table's words and signs mean."""


def render_board(state: State, seat: int | None = None) -> str:
    """Returns the text table for people: the seats' lines and a legend."""
    return render_text(state, seat).rstrip("\n") + "\n" + TEXT_LEGEND + "\n"
