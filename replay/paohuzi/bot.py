"""The seeded bot: takes every hu, makes the forced actions (the engine derives them), prefers
melds that build 胡息, and discards its loneliest card. Plays a whole deal into events."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from replay.paohuzi import rules
from replay.paohuzi.cards import LIANGZHANG_INDEX, card_id, deal_hands, full_deck
from replay.paohuzi.deals import commitment
from replay.paohuzi.events import FORCED_EVENTS, to_event
from replay.paohuzi.fold import _Fold, outcome, rules_apply
from replay.paohuzi.melds import Group, group_huxi
from replay.paohuzi.state import HU, PASS, PENG, Action, State
from replay.protocol import StrictReplayError
from schemas.common import GameEnded, GameStarted, MoveTimeUsed
from schemas.envelope import Event
from schemas.paohuzi import BoardCreated, BoardRevealed, Dealt, Huangzhuang, LiangzhangRevealed

_THINK_MS = {"draw": (1000, 2500), "discard": (2000, 15000), "pass": (1000, 6000)}
_DEFAULT_THINK_MS = (1500, 12000)


def choose(state: State, actions: Sequence[Action], rng: random.Random) -> Action:
    """Picks the bot's action among the legal ones."""
    if HU in actions:
        return HU
    if len(actions) == 1:
        return actions[0]
    if state.phase == "discard":
        return _discard(state, actions, rng)
    if PENG in actions:
        card = state.pending.card if state.pending is not None else 0
        return PENG if card >= 10 or rng.random() < 0.8 else PASS
    chis = [a for a in actions if a.kind == "chi"]
    if chis:
        table = state.profile.huxi_table
        best = max(chis, key=lambda a: (sum(group_huxi(Group("chi", g), table) for g in a.groups), rng.random()))
        if sum(group_huxi(Group("chi", g), table) for g in best.groups) > 0 or rng.random() < 0.4:
            return best
    return PASS if PASS in actions else actions[0]


def _discard(state: State, actions: Sequence[Action], rng: random.Random) -> Action:
    """Discards the card with the fewest partners in hand (pairs, neighbours, 二七十, 绞)."""
    hand = state.hands[state.turn]
    usable = [n if n < 3 else 0 for n in hand]

    def ties(card: int) -> float:
        size, rank = divmod(card, 10)
        near = sum(usable[size * 10 + r] for r in range(max(0, rank - 2), min(9, rank + 2) + 1) if r != rank)
        if rank in (1, 6, 9):
            near += sum(usable[size * 10 + r] for r in (1, 6, 9) if r != rank)
        return 3 * (usable[card] - 1) + near + usable[(card + 10) % 20] + rng.random()

    return min(actions, key=lambda a: ties(a.card))


def bot_game(start: GameStarted, rng: random.Random) -> list[Event]:
    """Plays one deal from a seeded shuffle: `start`, the board, deal, play and the `game.ended` claim."""
    deck = full_deck()
    rng.shuffle(deck)
    return play_board(start, deck, rng)


def play_board(start: GameStarted, deck: Sequence[int], rng: random.Random, salt: str | None = None) -> list[Event]:
    """Plays a given deck order (a duplicate board) with the bot at the table of `start`; every
    table given the same deck, board and salt logs the same commitment and deal."""
    board = start.board or start.stream
    salt = salt if salt is not None else board
    log = _Log(start)
    log.add(BoardCreated, None, board=board, commitment=commitment(deck, salt))
    log.add(BoardRevealed, None, board=board, deck=[card_id(c) for c in deck], salt=salt)
    hands = deal_hands(deck, start.first)
    log.add(Dealt, None, dealer=start.first, hands=[[card_id(c) for c in h] for h in hands])
    log.add(LiangzhangRevealed, None, card=card_id(deck[LIANGZHANG_INDEX]))
    state = log.state
    log.forced(state)
    while state.phase != "end":
        actions = rules.legal(state)
        action = choose(state, actions, rng)
        low, high = _THINK_MS.get(action.kind, _DEFAULT_THINK_MS)
        think = rng.randint(low, high)
        log.ts += think
        event = to_event(state, action, stream=start.stream, seq=len(log.events), ts=log.ts)
        log.events.append(event)
        log.add(MoveTimeUsed, event.seat, ms=think, move_seq=event.seq)
        state = rules_apply(state, action)
        log.forced(state)
    if state.exhausted:
        log.add(Huangzhuang, None)
    result = outcome(state)
    assert result is not None
    log.add(GameEnded, None, termination=result.termination, winners=list(result.winners), points=list(result.points))
    return log.events


class _Log:
    """The events of a deal being written, with the fold that keeps its state."""

    def __init__(self, start: GameStarted) -> None:
        self.events: list[Event] = [start]
        self.ts = start.ts
        self.fold = _Fold()
        self._step(start)
        self.state: State = self.fold.state  # type: ignore[assignment]

    def add(self, kind: type[Event], seat: int | None, **fields: Any) -> None:
        event = kind(stream=self.events[0].stream, seq=len(self.events), ts=self.ts, seat=seat, **fields)
        self.events.append(event)
        if self.fold.state is not None and self.fold.state.phase in ("board", "deal", "liang"):
            self._step(event)
            self.state = self.fold.state  # type: ignore[assignment]

    def _step(self, event: Event) -> None:
        """Folds a chance event the bot wrote; one the rules refuse is the bot's bug, raised at once."""
        for finding in self.fold.step(event).findings:
            if finding.severity == "error":
                raise StrictReplayError(finding)

    def forced(self, state: State) -> None:
        for kind, seat, card in state.effects:
            self.add(FORCED_EVENTS[kind], seat, card=card_id(card))
