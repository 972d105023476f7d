"""Pictures of a paohuzi table: SVG and text, for everyone or from one seat (face-down groups hidden)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import NamedTuple

from replay.paohuzi.cards import N_VALUES, Counts, card_number, card_numbers, cards_of, is_red, names
from replay.paohuzi.events import ACTION_EVENTS, FORCED_KINDS
from replay.paohuzi.melds import KIND_NAMES, Group, group_huxi
from replay.paohuzi.rules import current_seat
from replay.paohuzi.state import SEATS, Pending, State
from replay.picture import AS_CLAIMED, EMPTY, Frame, LegendRow, Mark, Sheet, compose, key, legend_svg
from replay.protocol import Step
from schemas.envelope import Event
from schemas.paohuzi import Chi, Discarded, Drawn, Hu, Passed, Peng

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


class ClaimedTable(NamedTuple):
    """A table as the log claims it, beyond the refused action that stopped the replay deriving the
    log (never a derived table): the cards moved as each event says, and the 胡 the log claims."""

    state: State
    hu: Hu | None = None
    owed: tuple[tuple[str, int, int], ...] = ()
    """Forced actions (kind, seat, card) the rules made on the derived table the claim started from
    and the log has not shown yet: shown later, they move nothing again."""


def _parts(table: State | ClaimedTable) -> tuple[State, Hu | None]:
    return (table.state, table.hu) if isinstance(table, ClaimedTable) else (table, None)


def _header(table: State | ClaimedTable, seat: int | None) -> str:
    state, _ = _parts(table)
    if isinstance(table, ClaimedTable):
        head = f"paohuzi {state.stream} — {AS_CLAIMED}"
    else:
        actor = current_seat(state)
        head = f"paohuzi {state.stream} — {state.phase}" + (f", seat {actor} to act" if actor is not None else "")
    return (head + f"; wall {state.wall_left}; 亮张 {names([state.liangzhang]) if state.liangzhang is not None else '-'}"
            + (f"; view of seat {seat}" if seat is not None else ""))


def render_text(table: State | ClaimedTable, seat: int | None = None) -> str:
    """Draws the table as text: a header, one line per seat, the card on offer and the result (on a
    table as the log claims it, the header says so and the result is the claimed 胡)."""
    state, hu = _parts(table)
    lines = [_header(table, seat)]
    if state.hands:
        lines.extend(_seat_line(state, s, seat) for s in range(SEATS))
    if state.pending is not None:
        where = "wall card of" if state.pending.from_wall else "discard of"
        lines.append(f"on offer: {names([state.pending.card])} ({where} seat {state.pending.owner})")
    if hu is not None:
        lines.extend(claimed_hu_lines(hu))
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


def claimed_hu_lines(hu: Hu) -> list[str]:
    """Returns a 胡 as the log claims it (never derived), Chinese with English beside: who, on which
    card, and the 胡息, 名堂, deal score and groups the event states."""
    on = f"胡 {names([card_number(hu.card)])}" if hu.card is not None else "自摸 on its own cards"
    stated = [f"{hu.huxi} 胡息"] if hu.huxi is not None else []
    stated += [f"名堂 {'、'.join(hu.mingtang)}"] if hu.mingtang else []
    stated += [f"局分 deal score {hu.score}"] if hu.score is not None else []
    groups = " · ".join(f"{KIND_NAMES[g.kind]} {names(card_numbers(g.cards))}" for g in hu.groups) or "未列出 none stated"
    return [f"所称之胡 claimed hu：座位 seat {hu.seat} {on}" + "".join(f"；{x}" for x in stated), f"所称组牌 claimed groups：{groups}"]


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


ACTION_WORDS = {"paohuzi.drawn": "摸牌 draw", "paohuzi.discarded": "打牌 discard", "paohuzi.chi": "吃 chi", "paohuzi.peng": "碰 peng",
                "paohuzi.passed": "过 pass", "paohuzi.hu": "胡 hu",
                **{f"paohuzi.{k}": f"{KIND_NAMES[k]} {k}" for k in ("wei", "chou_wei", "pao", "ti")}}
"""Each action of play in words, Chinese with English beside (as the timeline names its events)."""


def action_text(event: Event) -> str:
    """Returns an action as people read it: the seat, the action in words and its cards (a 吃 its group)."""
    card = getattr(event, "card", None)
    cards = getattr(event, "group", None) or ([card] if card else [])
    return f"座位 seat {event.seat} {ACTION_WORDS.get(event.kind, event.kind)}" + (f" {names(card_numbers(cards))}" if cards else "")


def frame(table: State | ClaimedTable, seat: int | None = None, attempt: Event | None = None) -> Frame:
    """Returns the table as a frame: hands (face down to other views), groups face up or down as
    the rules say, discard rows, the 亮张 and the card on offer, and `attempt` (a card action the
    rules refused) dashed beside its seat's hand; a table as the log claims it says so."""
    return _frame(table, seat, attempt)


def claimed_frame(table: ClaimedTable, event: Event) -> Frame:
    """Returns a table as the log claims it, its caption saying so and naming the action, the card
    it moved ringed as the last move (on offer, or the group it went into)."""
    shown = _frame(table, None, None, f"seq {event.seq} {action_text(event)}")
    slot = _moved_slot(table.state, event)
    return dataclasses.replace(shown, marks=(Mark("last", (slot,)),)) if slot is not None else shown


def _moved_slot(state: State, event: Event) -> int | None:
    """Returns the slot of the card an action moved: the card on offer, or the first card of the
    seat's last group holding it; None where it is not on the table (a 胡, a 过)."""
    card = getattr(event, "card", None)
    if card is None or event.seat is None or not 0 <= event.seat < SEATS:
        return None
    if isinstance(event, (Drawn, Discarded)):
        return OFFER_SLOT if state.pending is not None else None
    number, at, found = card_number(card), 0, None
    for g in state.melds[event.seat]:
        if number in g.cards:
            found = at
        at += len(g.cards) + 1
    return _seat_slots(event.seat)[2] + found if found is not None and found < _LONG else None


def _frame(table: State | ClaimedTable, seat: int | None, attempt: Event | None, claim: str = "") -> Frame:
    state, hu = _parts(table)
    cells = [EMPTY] * len(_slots())
    back = key(N_VALUES)

    def lay(first: int, cards: Sequence[int | None], room: int) -> None:
        for i, c in enumerate(cards[:room]):
            cells[first + i] = back if c is None else key(c)

    if state.liangzhang is not None:
        cells[LIANG_SLOT] = key(state.liangzhang)
    if state.pending is not None:
        cells[OFFER_SLOT] = key(state.pending.card)
    header = _header(table, seat)
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
    result = claimed_hu_lines(hu) if hu is not None else win_lines(state)
    texts += [(10.0, _height() - _RESULT + 20.0 + 20 * i, line) for i, line in enumerate(result)]
    marks: tuple[Mark, ...] = ()
    if isinstance(table, ClaimedTable):  # the claim first: the caption's first line says the table is not derived
        caption = f"{AS_CLAIMED}: " + (f"{claim}; " if claim else "") + " · ".join([header.split("; ", 1)[1], *result[:1]])
    else:
        caption = " · ".join([header, *result[:1]])
    card = _attempted_card(attempt)
    if card is not None and attempt is not None and attempt.seat is not None and attempt.seat < SEATS:
        slot = _seat_slots(attempt.seat)[1]
        cells[slot] = key(card)
        marks = (Mark("illegal", (slot,)),)
    if attempt is not None and type(attempt) in PLAY:
        caption += f"；被拒绝的动作 refused {action_text(attempt)}"
    return Frame("".join(cells), marks, tuple(texts), caption)


PLAY = frozenset((*ACTION_EVENTS, *FORCED_KINDS))
"""The kinds of event that act in play: the actions a seat chooses and the forced 偎, 臭偎, 跑, 提."""


def is_refused(steps: Sequence[Step], i: int) -> bool:
    """Tells whether the rules refused step i's event: an error found and the table left as it was."""
    return i > 0 and any(f.severity == "error" for f in steps[i].findings) and steps[i].state == steps[i - 1].state


def stopped_at(steps: Sequence[Step]) -> int | None:
    """Returns the index of the refused action from which the replay derives no more of the log: the
    first action of play the rules refused whose next action of play is refused too (the log went on
    as if it had been taken), or that is the deal's last; None where play went on derived after
    every refusal (a refused action the log then ignores, such as a move out of turn sent twice)."""
    play = [i for i, step in enumerate(steps) if type(step.event) in PLAY]
    for n, i in enumerate(play):
        if is_refused(steps, i) and (n + 1 == len(play) or is_refused(steps, play[n + 1])):
            return i
    return None


def claimed_table(steps: Sequence[Step], i: int) -> ClaimedTable:
    """Returns step i's derived table as the start of a claim: the forced actions the rules made on
    it and the log has not shown by then are owed, so that logging them later moves nothing twice."""
    state = steps[i].state
    made = i
    while made > 0 and steps[made - 1].state is state:  # the fold hands on the same table while nothing changes
        made -= 1
    owed = list(state.effects)
    for step in steps[made + 1:i + 1]:
        shown = _forced(step.event)
        if shown in owed:
            owed.remove(shown)
    return ClaimedTable(state, None, tuple(owed))


def start_claim(steps: Sequence[Step], halt: int) -> ClaimedTable:
    """Returns the table as the log claims it after the refused action at step `halt`: the last
    derived table with that action taken as claimed (the log went on as if it had been)."""
    table = claimed_table(steps, halt)
    return as_claimed(table, steps[halt].event) or table


def _forced(event: Event) -> tuple[str, int | None, int] | None:
    kind = FORCED_KINDS.get(type(event))
    return (kind, event.seat, card_number(event.card)) if kind is not None else None  # type: ignore[attr-defined]


def as_claimed(table: State | ClaimedTable, event: Event) -> ClaimedTable | None:
    """Returns the table after an action as the log claims it, taken without the rules (the view
    beyond the refused action that stopped the replay, never a derived table): a drawn or discarded
    card goes on offer (the card it follows to its owner's discard row), a 吃, 碰, 偎, 臭偎, 跑 or 提
    takes its cards from the hand and the card on offer into a group (a card the hand lacks from
    nowhere), a 胡 ends the deal on its claimed groups; None where the event moves no card (a 过, a
    time, a result)."""
    state, hu = _parts(table)
    owed = table.owed if isinstance(table, ClaimedTable) else ()
    seat = event.seat
    if type(event) not in PLAY or seat is None or not 0 <= seat < SEATS or not state.hands or isinstance(event, Passed):
        return None
    if isinstance(event, Hu):
        return ClaimedTable(state.replace(phase="end", pending=None, offers=(), stage=""), event, owed)
    shown = _forced(event)
    if shown in owed:  # made by the rules on the derived table already, logged after it
        at = owed.index(shown)
        return ClaimedTable(state, hu, owed[:at] + owed[at + 1:])
    return ClaimedTable(_moved(state, event, seat, card_number(event.card)), hu, owed)  # type: ignore[attr-defined]


def _moved(state: State, event: Event, seat: int, card: int) -> State:
    """Returns the table after a card action taken as the log states it (a 胡 and a 过 aside)."""
    if isinstance(event, (Drawn, Discarded)):
        new = settled(state)
        hands = new.hands if isinstance(event, Drawn) else _taken(new.hands, seat, [card])
        return new.replace(hands=hands, pending=Pending(card, seat, from_wall=isinstance(event, Drawn)), phase="draw", turn=seat,
                           wall_left=max(0, state.wall_left - isinstance(event, Drawn)), offers=(), stage="")
    offered = state.pending is not None and state.pending.card == card and not state.pending.in_hand
    new = state.replace(pending=None) if offered else settled(state)
    if isinstance(event, Chi):
        groups = [tuple(sorted(card_numbers(g))) for g in (event.group, *event.bi)]
        taken = [c for g in groups for c in g]
        if offered and card in taken:
            taken.remove(card)
        return _claimed_intake(new, seat, _taken(new.hands, seat, taken), new.melds[seat] + tuple(Group("chi", g) for g in groups))
    kind = "peng" if isinstance(event, Peng) else FORCED_KINDS[type(event)]
    size = 4 if kind in ("pao", "ti") else 3
    onto = next((i for i, g in enumerate(new.melds[seat]) if len(g.cards) == 3 and set(g.cards) == {card} and g.kind != "chi"), None)
    if size == 4 and onto is not None:  # the fourth card onto a 偎, 臭偎 or 碰 on the table
        melds = new.melds[seat][:onto] + (Group(kind, (card,) * 4),) + new.melds[seat][onto + 1:]
        return _claimed_intake(new, seat, new.hands if offered else _taken(new.hands, seat, [card]), melds)
    return _claimed_intake(new, seat, _taken(new.hands, seat, [card] * (size - offered)), new.melds[seat] + (Group(kind, (card,) * size),))


def settled(state: State) -> State:
    """Returns the table with the card on offer laid in its owner's discard row (the log went on
    without anyone taking it); the 亮张, still in the dealer's hand, only leaves the offer."""
    pending = state.pending
    if pending is None:
        return state
    if pending.in_hand:
        return state.replace(pending=None)
    row = state.discards[pending.owner] + (pending.card,)
    return state.replace(pending=None, discards=tuple(row if s == pending.owner else d for s, d in enumerate(state.discards)))


def _taken(hands: tuple[Counts, ...], seat: int, cards: Sequence[int]) -> tuple[Counts, ...]:
    """Returns the hands with `cards` taken from `seat`'s (never below none: a card the hand lacks comes from nowhere)."""
    hand = list(hands[seat])
    for c in cards:
        hand[c] = max(0, hand[c] - 1)
    return tuple(tuple(hand) if s == seat else h for s, h in enumerate(hands))


def _claimed_intake(state: State, seat: int, hands: tuple[Counts, ...], melds: tuple[Group, ...]) -> State:
    """Returns the table after a seat took cards into its groups as claimed: it is the seat to discard."""
    all_melds = tuple(melds if s == seat else m for s, m in enumerate(state.melds))
    huxi = tuple(sum(group_huxi(g, state.profile.huxi_table) for g in m) for m in all_melds)
    return state.replace(hands=hands, melds=all_melds, table_huxi=huxi, phase="discard", turn=seat, offers=(), stage="")


def render_svg(table: State | ClaimedTable, seat: int | None = None, players: Sequence[str] = ()) -> str:
    """Draws the table as SVG: per seat its hand (hidden from other views), its groups face up or
    down as the rules say, its discard row; the wall count, the 亮张, the card on offer and the legend."""
    return compose(sheet(_parts(table)[0], players), frame(table, seat))


TEXT_LEGEND = (
    f"legend: 一…十 small cards (小字), 壹…拾 big cards (大字); 庄 the dealer, 闲 the others; {HIDDEN} a face-down card;\n"
    "        groups 吃 碰 偎 臭偎 跑 提 (坎 three alike dealt to one hand); 胡息 of the groups this view sees;\n"
    "        seats are numbered 0–2 in turn order (tournament.md §1a)"
)
"""What the text table's words and signs mean."""


def render_board(table: State | ClaimedTable, seat: int | None = None) -> str:
    """Returns the text table for people: the seats' lines and a legend."""
    return render_text(table, seat).rstrip("\n") + "\n" + TEXT_LEGEND + "\n"
