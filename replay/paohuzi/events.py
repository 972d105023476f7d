"""Between actions and events: the event that records an action, and the action an event records."""

from __future__ import annotations

from typing import Any, Final, cast

from replay.paohuzi.cards import card_id, card_number
from replay.paohuzi.melds import Group, new_tuple
from replay.paohuzi.options import hu_result
from replay.paohuzi.rules import current_seat, hu_takes_pending
from replay.paohuzi.state import DISCARDS, DRAW, DRAWS, HU, PASS, PENG, Action, State
from replay.protocol import InvalidActionError
from schemas.envelope import Event
from schemas.paohuzi import Chi, ChouWei, Discarded, Drawn, Hu, HuGroup, Pao, Passed, Peng, Ti, Wei

FORCED_EVENTS: dict[str, type[Event]] = {"ti": Ti, "wei": Wei, "chou_wei": ChouWei, "pao": Pao}
FORCED_KINDS: Final = {cls: kind for kind, cls in FORCED_EVENTS.items()}
ACTION_EVENTS: Final = (Drawn, Discarded, Chi, Peng, Passed, Hu)


def to_event(state: State, action: Action, *, stream: str, seq: int, ts: int) -> Event:
    """Returns the event recording `action` by the seat to act.

    :raises InvalidActionError: for an action kind this game does not have.
    """
    seat = current_seat(state)
    common: dict[str, Any] = {"stream": stream, "seq": seq, "ts": ts, "seat": seat if seat is not None else state.turn}
    pending = state.pending
    match action.kind:
        case "draw":
            card = action.card if action.card >= 0 else state.wall[0]
            return Drawn(**common, card=card_id(card))
        case "discard":
            return Discarded(**common, card=card_id(action.card))
        case "chi":
            assert pending is not None
            main, *bi = action.groups
            return Chi(**common, card=card_id(pending.card), group=[card_id(c) for c in main],
                       bi=[[card_id(c) for c in g] for g in bi])
        case "peng":
            assert pending is not None
            return Peng(**common, card=card_id(pending.card))
        case "pass":
            return Passed(**common, card=card_id(pending.card) if pending is not None else None)
        case "hu":
            return _hu_event(state, common)
    raise InvalidActionError(f"not a paohuzi action: {action!r}")


def _hu_event(state: State, common: dict[str, Any]) -> Hu:
    seat = common["seat"]
    result = hu_result(state, seat)
    card = state.pending.card if state.pending is not None and hu_takes_pending(state, seat) else None
    if result is None:
        return Hu(**common, card=card_id(card) if card is not None else None)
    return Hu(
        **common, card=card_id(card) if card is not None else None, groups=[hu_group(g) for g in result.groups],
        huxi=result.huxi, mingtang=[name for name, _ in result.mingtang], score=2 * result.score.s,
    )


def hu_group(group: Group) -> HuGroup:
    """Returns the recorded form of one 门子."""
    return HuGroup(kind=group.kind, cards=[card_id(c) for c in group.cards])  # type: ignore[arg-type]


def to_action(state: State, event: Event) -> Action:
    """Returns the action an action event records (a draw from an unknown wall carries its card).

    :raises InvalidActionError: for an event that records no action.
    """
    kind = type(event)  # each kind of event is its own tagged class, never subclassed: no isinstance walk
    if kind is Drawn:
        return DRAW if state.deck is not None else DRAWS[card_number(cast(Drawn, event).card)]
    if kind is Discarded:
        return DISCARDS[card_number(cast(Discarded, event).card)]
    if kind is Passed:
        return PASS
    if kind is Chi:
        chi = cast(Chi, event)
        main = tuple(sorted(card_number(c) for c in chi.group))
        bi = sorted(tuple(sorted(card_number(c) for c in g)) for g in chi.bi)
        return new_tuple(Action, ("chi", -1, (main, *bi)))
    if kind is Peng:
        return PENG
    if kind is Hu:
        return HU
    raise InvalidActionError(f"{event.kind} records no action")  # type: ignore[attr-defined]
