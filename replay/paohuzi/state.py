"""The frozen state of one paohuzi deal, its actions, and their short notation."""

from __future__ import annotations

from typing import Any, Final, NamedTuple

from replay.paohuzi.cards import N_VALUES, Counts, card_id, ids, names
from replay.paohuzi.hu import HuResult
from replay.paohuzi.melds import Group
from replay.protocol import Said
from schemas.paohuzi import PaohuziProfile

SEATS: Final = 3


def xiajia(seat: int) -> int:
    """Returns the 下家 of a seat: the next in turn order (seats are numbered in turn order)."""
    return (seat + 1) % SEATS


class Action(NamedTuple):
    """A decision: `draw`, `discard` (card), `chi` (groups: the eaten group first, then the 比
    groups), `peng`, `hu` or `pass`. A chance draw from an unknown wall carries its card."""

    kind: str
    card: int = -1
    groups: tuple[tuple[int, ...], ...] = ()

    def notation(self) -> str:
        """Returns the compact notation: `draw`, `discard x3`, `chi x1x2x3 bi x3x4x5`, `peng`, `hu`, `pass`."""
        if self.kind == "chi":
            return "chi " + " bi ".join(ids(g) for g in self.groups)
        if self.card >= 0:
            return f"{self.kind} {card_id(self.card)}"
        return self.kind

    def said(self) -> Said:
        """Returns the action as people read it, its cards as the board shows them: `吃 一二三 比 三四五`, `chi 一二三 bi 三四五`."""
        zh, en = KIND_WORDS[self.kind]
        if self.kind == "chi":
            return Said("吃 " + " 比 ".join(names(g) for g in self.groups), "chi " + " bi ".join(names(g) for g in self.groups))
        if self.card >= 0:
            return Said(f"{zh} {names([self.card])}", f"{en} {names([self.card])}")
        return Said(zh, en)


KIND_WORDS: Final = {
    "draw": ("摸牌", "draw"), "discard": ("打出", "discard"), "chi": ("吃", "chi"), "peng": ("碰", "peng"), "hu": ("胡", "hu"),
    "pass": ("过", "pass"), "wei": ("偎", "wei"), "chou_wei": ("臭偎", "chou wei"), "pao": ("跑", "pao"), "ti": ("提", "ti"),
}
"""Each action and forced action of play in words, Chinese and English (the Chinese as the rule book names it)."""


DRAW: Final = Action("draw")
PENG: Final = Action("peng")
HU: Final = Action("hu")
PASS: Final = Action("pass")
DISCARDS: Final = tuple(Action("discard", card) for card in range(N_VALUES))
"""The discard of each card number, built once (replay reads one per discard event)."""
DRAWS: Final = tuple(Action("draw", card) for card in range(N_VALUES))
"""The chance draw of each card number from an unknown wall."""


class Pending(NamedTuple):
    """The card on offer: its owner (drawer or discarder), whether it came from the wall, and
    whether it also still lies in a hand (the 亮张 is in the dealer's hand while it is offered)."""

    card: int
    owner: int
    from_wall: bool
    in_hand: bool = False


class Offer(NamedTuple):
    """A seat's turn to answer the card on offer at one priority stage (第九条), with its choices."""

    seat: int
    stage: str
    actions: tuple[Action, ...]


class Win(NamedTuple):
    """A hu: who won, on which card, from whom and whether off the wall, and the derived hand."""

    seat: int
    card: int | None
    owner: int | None
    from_wall: bool
    result: HuResult


FIELDS: Final = (
    "profile", "stream", "phase", "dealer", "turn", "board", "deck", "commitment", "wall", "wall_left", "drawn",
    "hands", "melds", "table_huxi", "discards", "liangzhang", "pending", "stage", "offers", "guo_zhang", "chou",
    "guo_peng", "pao_ti", "skip_discard", "dead", "intakes", "forced_intakes", "settled", "discards_made", "effects",
    "win", "exhausted",
)
"""The fields of a `State`, in order (its `repr`, `replace` and the tests read them)."""


class State:
    """One deal between events: phase (`board`, `deal`, `liang` are chance; `draw`, `discard`,
    `offer`; `end`), hands as card counts (坎 included), table groups, discard rows, the wall
    and the per-seat memories the rules need (过张, 过碰, 跑/提 count, discards still exempt,
    吃/碰 and forced intakes). `settled`: the card just laid in a discard row, until the next draw,
    so a late claim on it is diagnosed by the rule it breaks.

    Frozen by contract, not by the class: code that changes a state changes a fresh `copy()` (or
    calls `replace`) before anyone else sees it, so each state a step or `apply_action` returns
    stays as it was. A plain class, not a msgspec Struct, because mypyc compiles it to a native
    class whose fields the compiled rules read directly (a Struct's are looked up by name, about
    165 instructions each) and whose `copy()` costs a fraction of `msgspec.structs.replace`."""

    profile: PaohuziProfile
    stream: str
    phase: str
    dealer: int
    turn: int
    board: str | None
    deck: tuple[int, ...] | None
    commitment: str | None
    wall: tuple[int, ...]
    wall_left: int
    drawn: tuple[int, ...]
    hands: tuple[Counts, ...]
    melds: tuple[tuple[Group, ...], ...]
    table_huxi: tuple[int, ...]
    discards: tuple[tuple[int, ...], ...]
    liangzhang: int | None
    pending: Pending | None
    stage: str
    offers: tuple[Offer, ...]
    guo_zhang: tuple[int, ...]
    chou: tuple[int, ...]
    guo_peng: tuple[int, ...]
    pao_ti: tuple[int, ...]
    skip_discard: tuple[int, ...]
    dead: tuple[bool, ...]
    intakes: tuple[int, ...]
    forced_intakes: tuple[int, ...]
    settled: Pending | None
    discards_made: int
    effects: tuple[tuple[str, int, int], ...]
    win: Win | None
    exhausted: bool

    def __init__(
        self, *,
        profile: PaohuziProfile,
        stream: str,
        phase: str = "board",
        dealer: int = 0,
        turn: int = 0,
        board: str | None = None,
        deck: tuple[int, ...] | None = None,
        commitment: str | None = None,
        wall: tuple[int, ...] = (),
        wall_left: int = 19,
        drawn: tuple[int, ...] = (),
        hands: tuple[Counts, ...] = (),
        melds: tuple[tuple[Group, ...], ...] = ((), (), ()),
        table_huxi: tuple[int, ...] = (0, 0, 0),
        discards: tuple[tuple[int, ...], ...] = ((), (), ()),
        liangzhang: int | None = None,
        pending: Pending | None = None,
        stage: str = "",
        offers: tuple[Offer, ...] = (),
        guo_zhang: tuple[int, ...] = (0, 0, 0),
        chou: tuple[int, ...] = (0, 0, 0),
        guo_peng: tuple[int, ...] = (0, 0, 0),
        pao_ti: tuple[int, ...] = (0, 0, 0),
        skip_discard: tuple[int, ...] = (0, 0, 0),
        dead: tuple[bool, ...] = (False, False, False),
        intakes: tuple[int, ...] = (0, 0, 0),
        forced_intakes: tuple[int, ...] = (0, 0, 0),
        settled: Pending | None = None,
        discards_made: int = 0,
        effects: tuple[tuple[str, int, int], ...] = (),
        win: Win | None = None,
        exhausted: bool = False,
    ) -> None:
        self.profile = profile
        self.stream = stream
        self.phase = phase
        self.dealer = dealer
        self.turn = turn
        self.board = board
        self.deck = deck
        self.commitment = commitment
        self.wall = wall
        self.wall_left = wall_left
        self.drawn = drawn
        self.hands = hands
        self.melds = melds
        self.table_huxi = table_huxi
        self.discards = discards
        self.liangzhang = liangzhang
        self.pending = pending
        self.stage = stage
        self.offers = offers
        self.guo_zhang = guo_zhang
        self.chou = chou
        self.guo_peng = guo_peng
        self.pao_ti = pao_ti
        self.skip_discard = skip_discard
        self.dead = dead
        self.intakes = intakes
        self.forced_intakes = forced_intakes
        self.settled = settled
        self.discards_made = discards_made
        self.effects = effects
        self.win = win
        self.exhausted = exhausted

    def copy(self) -> State:
        """Returns a new state with the same fields (the same objects: the rules change the copy's fields, never those objects)."""
        return State(
            profile=self.profile, stream=self.stream, phase=self.phase, dealer=self.dealer, turn=self.turn,
            board=self.board, deck=self.deck, commitment=self.commitment, wall=self.wall, wall_left=self.wall_left,
            drawn=self.drawn, hands=self.hands, melds=self.melds, table_huxi=self.table_huxi, discards=self.discards,
            liangzhang=self.liangzhang, pending=self.pending, stage=self.stage, offers=self.offers,
            guo_zhang=self.guo_zhang, chou=self.chou, guo_peng=self.guo_peng, pao_ti=self.pao_ti,
            skip_discard=self.skip_discard, dead=self.dead, intakes=self.intakes, forced_intakes=self.forced_intakes,
            settled=self.settled, discards_made=self.discards_made, effects=self.effects, win=self.win,
            exhausted=self.exhausted,
        )

    def replace(self, **changes: Any) -> State:
        """Returns a copy with the named fields changed (as `msgspec.structs.replace` did).

        :raises TypeError: for a name that is not a field.
        """
        state = self.copy()
        for name, value in changes.items():
            if name not in FIELDS:
                raise TypeError(f"State has no field {name!r}")
            setattr(state, name, value)
        return state

    def values(self) -> tuple[object, ...]:
        """Returns the fields' values, in the order of `FIELDS`."""
        return (
            self.profile, self.stream, self.phase, self.dealer, self.turn, self.board, self.deck, self.commitment,
            self.wall, self.wall_left, self.drawn, self.hands, self.melds, self.table_huxi, self.discards, self.liangzhang,
            self.pending, self.stage, self.offers, self.guo_zhang, self.chou, self.guo_peng, self.pao_ti,
            self.skip_discard, self.dead, self.intakes, self.forced_intakes, self.settled, self.discards_made,
            self.effects, self.win, self.exhausted,
        )

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles a state by its fields (a native class is otherwise rebuilt by calling `__init__` with none)."""
        return _state_of, (self.values(),)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, State):
            return NotImplemented
        return self.values() == other.values()

    def __hash__(self) -> int:
        return hash(self.values())

    def __repr__(self) -> str:
        return "State(" + ", ".join(f"{name}={value!r}" for name, value in zip(FIELDS, self.values())) + ")"


def _state_of(values: tuple[Any, ...]) -> State:
    """Returns the state of these field values, in the order of `FIELDS` (for pickle)."""
    return State(**dict(zip(FIELDS, values)))
