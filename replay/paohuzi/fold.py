"""Replay of one paohuzi deal as a fold over its events, with derived facts and findings.

Each kind of event has its handler in `_HANDLERS`, of the one shape of every fold,
`(state, event, fold, facts) -> state` (replay.fold.Handler): it returns the state after the event
and reports findings one way, `_Fold.find(event, code, message, article)` (replay.fold.Findings).
Unlike the checkers and Junqi handlers it leaves `facts` alone (it gets an empty dict it must not
fill): its own facts (the action, a move's time, a hu's) go on the fold, and the step's facts are
built at once from them and the state after it (`_StateFacts`, worked out once per state), since
filling a dict per step cost about 5 % compiled (bench/README.md, 2026-12-04). The card
conservation check runs on every new state.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Any, Final, cast

from replay.claims import check_claim
from replay.fold import Facts, Handler, checked_steps
from replay.paohuzi import rules
from replay.paohuzi.cards import (
    COPIES,
    DECK_SIZE,
    HAND_SIZE,
    LIANGZHANG_INDEX,
    N_VALUES,
    WALL_START,
    Counts,
    card_id,
    card_number,
    card_numbers,
    counts_of,
    deal_hands,
    names,
)
from replay.paohuzi.checks import (
    ART_DEAL,
    ART_END,
    ART_HUXI,
    ART_LIANG,
    ART_MINGTANG,
    ART_PLAY,
    ART_PRIORITY,
    ART_SCORE,
    ART_SEATS,
    PHASE_WORDS,
    by_seat,
    check,
    claim_out_of_turn,
    forced_problem,
    stage_words,
)
from replay.paohuzi.codes import CODES, Termination
from replay.paohuzi.deals import commitment, deck_problem
from replay.paohuzi.events import ACTION_EVENTS, FORCED_KINDS, to_action
from replay.paohuzi.melds import Group
from replay.paohuzi.state import DISCARDS, DRAW, DRAWS, HU, KIND_WORDS, PASS, PENG, SEATS, Action, Pending, State, Win
from replay.protocol import Finding, IllegalActionError, InvalidActionError, Outcome, Place, Said, Step, found, seat_list_zh_en
from schemas.common import GameEnded, GameStarted, MoveTimeUsed
from schemas.envelope import Event
from schemas.paohuzi import BoardCreated, BoardRevealed, Dealt, Hu, Huangzhuang, LiangzhangRevealed, PaohuziProfile


def new_state(start: GameStarted) -> State:
    """Returns the state before any event after `game.started` (the profile must be paohuzi's).

    :raises InvalidActionError: when the start names another game's profile.
    """
    if not isinstance(start.profile, PaohuziProfile):
        raise InvalidActionError(f"game.started of {start.stream} carries a {type(start.profile).__name__}, not a PaohuziProfile")
    return State(profile=start.profile, stream=start.stream, dealer=start.first, turn=start.first)


def outcome(state: State) -> Outcome | None:
    """Returns how the deal ended: `HU` with the deal score of §10, or `WALL_EXHAUSTED` (荒庄)."""
    if state.win is not None:
        win = state.win
        s = win.result.score.s
        points = [-s] * SEATS
        if state.profile.deal_score == "discarder_pays_both" and not win.from_wall and win.owner is not None:
            points = [0] * SEATS
            points[win.owner] = -2 * s
        points[win.seat] = 2 * s
        return Outcome(termination=Termination.HU, winners=(win.seat,), points=tuple(points))
    if state.exhausted:
        return Outcome(termination=Termination.WALL_EXHAUSTED, winners=(), points=(0,) * SEATS)
    return None


class _StateFacts:
    """The facts every step carries about the state after it: phase, wall, each seat's table 胡息,
    who may act on the card on offer, and the forced actions the rules derived. Worked out once
    per state: events that leave the state as it was (timings, logged forced actions) reuse them.
    Also holds the fields the card conservation check reads."""

    def __init__(self, state: State) -> None:
        self.phase: str = state.phase
        self.wall: int = state.wall_left
        self.drawn: tuple[int, ...] = state.drawn
        self.hands: tuple[Counts, ...] = state.hands
        self.melds: tuple[tuple[Group, ...], ...] = state.melds
        self.discards: tuple[tuple[int, ...], ...] = state.discards
        self.pending: Pending | None = state.pending
        self.win: Win | None = state.win
        offers, effects, huxi = state.offers, state.effects, state.table_huxi
        self.huxi_0, self.huxi_1, self.huxi_2 = huxi[0], huxi[1], huxi[2]
        self.could_act = ",".join([f"{o.seat}:{o.stage}" for o in offers]) if offers else None
        self.derived = ",".join([f"{k} {card_id(c)} by {s}" for k, s, c in effects]) if effects else None

    def step_facts(self, seat: int | None, action: str | None, forced: bool) -> dict[str, Any]:
        """Returns a step's facts: who acted and what, then the state's (one dict, built at once)."""
        return {
            "seat": seat, "action": action, "forced": forced, "phase": self.phase, "wall": self.wall,
            "huxi_0": self.huxi_0, "huxi_1": self.huxi_1, "huxi_2": self.huxi_2, "could_act": self.could_act, "derived": self.derived,
        }

    def timed_facts(self, seat: int, ms: int, used: int) -> dict[str, Any]:
        """Returns the facts of a seat's move time: the time and the seat's total, then the state's."""
        return {
            "seat": seat, "action": None, "forced": False, "ms": ms, "time_used": used, "phase": self.phase, "wall": self.wall,
            "huxi_0": self.huxi_0, "huxi_1": self.huxi_1, "huxi_2": self.huxi_2, "could_act": self.could_act, "derived": self.derived,
        }

    def after(self, facts: dict[str, Any]) -> dict[str, Any]:
        """Returns a step's own facts (those of a hu, say) followed by the state's."""
        facts.update({
            "phase": self.phase, "wall": self.wall, "huxi_0": self.huxi_0, "huxi_1": self.huxi_1, "huxi_2": self.huxi_2,
            "could_act": self.could_act, "derived": self.derived,
        })
        return facts


def hu_facts(state: State) -> dict[str, Any]:
    """Returns the facts of a hu: 胡息, 名堂, 囤, 番, S (each loser's share) and who pays both
    shares when the profile makes the discarder pay (§10)."""
    win = state.win
    assert win is not None
    r = win.result
    pays_both = state.profile.deal_score == "discarder_pays_both" and not win.from_wall and win.owner is not None
    return {
        "huxi": r.huxi, "mingtang": ",".join(name for name, _ in r.mingtang) or None, "tun": r.score.tun,
        "fan": r.score.fan, "score_s": r.score.s, "payer": win.owner if pays_both else None,
        "winning_card": card_id(win.card) if win.card is not None else None,
    }


class _Fold:
    """The running fold beside the state: the forced actions derived but not yet seen logged, the
    timing, the cards that left the wall, and the findings of the event being folded, reported one
    way, `find` (`replay.fold.Findings`). `step` passes each event to its handler (`_HANDLERS`)."""

    def __init__(self) -> None:
        self.state: State | None = None
        self.unlogged: list[tuple[str, int, int]] = []
        self.from_play = False  # whether `unlogged` came from play, where skipping one explains a later misstep
        self.found: list[Finding] = []
        self.last_state: State | None = None
        self.last_facts: _StateFacts | None = None
        self.action: str | None = None  # the step's own facts, set by its handler: the action, as its facts name it
        self.forced = False
        self.ms: int | None = None  # the time of a move and the seat's total, for a move time
        self.used: int | None = None
        self.extra: dict[str, Any] | None = None  # the facts of a hu
        self.turn_end = 0
        self.gaps: dict[int, int] = {}
        self._set_left_wall((0,) * N_VALUES)
        self.census = _Census()
        self.time_used = [0] * SEATS
        self.drawn_seen = 0
        self.dealt: list[list[int]] | None = None

    def find(self, event: Place, code: str, message: str, article: str | None = None) -> None:
        """Records the finding of `code` at `event` (its severity is the catalogue's)."""
        self.found.append(found(CODES, event, code, message, article))

    def step(self, event: Event) -> Step:
        """Folds one event through its handler; returns its step: the state after it, the facts (the
        seat, the action and whether forced, the handler's own, then the state's) and the findings."""
        if self.found:
            self.found = []
        self.action, self.forced, self.ms, self.used, self.extra = None, False, None, None, None
        seat = event.seat
        state = self.state
        kind = type(event)
        handler = _HANDLERS.get(kind)
        # Only an event naming a seat past the last, or one that seats players, can name no seat.
        if ((seat is not None and seat >= SEATS) or handler is None or kind is GameStarted or kind is Dealt) and self._names_no_seat(event):
            pass  # ignored: it can change nothing in a game without that seat
        elif state is None and kind is not GameStarted:
            self.find(event, "paohuzi.X02", f"开局事件之前出现 {event.kind} {event.kind} before game.started", ART_DEAL)  # type: ignore[attr-defined]
        elif handler is not None:
            # the state is None only for the start, whose handler takes None
            state = handler(state, event, self, _NO_FACTS)  # type: ignore[arg-type]
            self.state = state
        if state is not None and state is not self.last_state:
            known = _StateFacts(state)
            if known.hands:
                self._conservation(event, known)
            self.last_state, self.last_facts = state, known
        findings = tuple(self.found) if self.found else ()
        return Step(event=event, state=state, facts=self._facts(seat, state), findings=findings)

    def _facts(self, seat: int | None, state: State | None) -> dict[str, Any]:
        """Returns the step's facts: the seat, the action and whether forced, what the step's handler
        added (the time of a move, the facts of a hu), then the state's (`_StateFacts`), keys in
        that order; each dict is built at once for the common steps."""
        facts: dict[str, Any]
        known = self.last_facts
        if state is not None and known is not None:
            if self.ms is None and self.extra is None:
                return known.step_facts(seat, self.action, self.forced)
            if seat is not None and self.ms is not None and self.used is not None:
                return known.timed_facts(seat, self.ms, self.used)
        facts = {"seat": seat, "action": self.action, "forced": self.forced}
        if self.ms is not None:
            facts["ms"] = self.ms
        if self.used is not None:
            facts["time_used"] = self.used
        if self.extra is not None:
            facts.update(self.extra)
        return known.after(facts) if state is not None and known is not None else facts

    def _names_no_seat(self, event: Event) -> bool:
        """Reports an event that names a seat this three-seat game does not have (X03; the schema allows
        seats 0–3); such an event is otherwise ignored. Seat holders of game.started are only reported."""
        seat = event.seat
        if isinstance(event, (GameStarted, Dealt)) and (seat is None or seat < SEATS):
            seat = event.first if isinstance(event, GameStarted) else event.dealer
        if seat is not None and seat >= SEATS:
            self.find(event, "paohuzi.X03", f"事件 {event.kind} 指明座位{seat}，本局座位为 0–{SEATS - 1}，此事件不计 "  # type: ignore[attr-defined]
                      f"{event.kind} names seat {seat}, but the game has seats 0–{SEATS - 1}; the event is ignored", ART_SEATS)
            return True
        holders = [h.seat for h in event.seats if h.seat >= SEATS] if isinstance(event, GameStarted) else []
        if holders:
            self.find(event, "paohuzi.X03", f"开局把选手安排在座位{holders[0]}，本局座位为 0–{SEATS - 1} "
                      f"{event.kind} seats a player at seat {holders[0]}, but the game has seats 0–{SEATS - 1}", ART_SEATS)
        return False

    def _set_left_wall(self, counts: Counts) -> None:
        """Sets the cards that have left the wall (dealt, 亮张, drawn), with their total and largest
        count, which the conservation check reads at every state while they change only on a draw."""
        self.left_wall = list(counts)
        self.left_total = sum(counts)
        self.left_max = max(counts)

    def _left_wall(self, card: int) -> None:
        """Counts one more card that left the wall (the 亮张 or a draw)."""
        self.left_wall[card] += 1
        self.left_total += 1
        self.left_max = max(self.left_max, self.left_wall[card])

    def _conservation(self, event: Event, known: _StateFacts) -> None:
        """Checks that the 80 cards are all somewhere (§14): the cards in hands, table groups, discard
        rows and on offer are exactly those that left the wall (dealt, 亮张, drawn), no card has
        more than four copies, and with the wall they make 80."""
        drawn = known.drawn
        while self.drawn_seen < len(drawn):
            self._left_wall(drawn[self.drawn_seen])
            self.drawn_seen += 1
        census = self.census.of(known)
        total = self.left_total + known.wall + (1 if known.phase == "liang" else 0)
        if census != self.left_wall or total != DECK_SIZE or self.left_max > COPIES:
            bad = [names([c]) for c in range(N_VALUES) if census[c] != self.left_wall[c] or self.left_wall[c] > COPIES]
            self.find(event, "paohuzi.C01", f"牌数不守恒：共 {total} 张，{'、'.join(bad) or '各牌'}张数不对 "
                      f"card conservation broken: {total} cards, wrong count of {', '.join(bad) or '-'}", ART_DEAL)


# ---- the handlers, one per kind of event: `(state, event, fold, facts) -> state` (replay.fold.Handler) ----


def _on_start(state: State | None, event: GameStarted, fold: _Fold, facts: Facts) -> State:
    return new_state(event)


def _on_huangzhuang(state: State, event: Huangzhuang, fold: _Fold, facts: Facts) -> State:
    if not state.exhausted:
        fold.find(event, "paohuzi.E02", "申报荒庄，但墩未摸完或本局已有人胡 荒庄 claimed but the wall is not exhausted or the deal was won", ART_END)
    return state


def _on_ended(state: State, event: GameEnded, fold: _Fold, facts: Facts) -> State:
    for f in check_claim(CODES, "paohuzi.E01", event, outcome(state), ART_END):
        fold.find(event, f.code, f.message, f.article)
    return state


def _on_move_time(state: State, event: MoveTimeUsed, fold: _Fold, facts: Facts) -> State:
    """Compares the time a seat used with the gap between its move and the previous turn's end."""
    seat, ms, move_seq = event.seat, event.ms, event.move_seq
    fold.ms = ms
    if seat is not None:
        fold.time_used[seat] += ms
        fold.used = fold.time_used[seat]
    gap = fold.gaps.get(move_seq) if move_seq is not None else None
    if gap is not None and gap != ms:
        fold.find(event, "paohuzi.W01", f"计时称座位{seat}用时 {ms} 毫秒，时间戳为 {gap} 毫秒 "
                                        f"seat {seat} used {ms} ms by the clock but the timestamps give {gap} ms")
    return state


# ---- the board and the deal (第五条, 第六条) ------------------------------------------


def _on_board(state: State, event: BoardCreated, fold: _Fold, facts: Facts) -> State:
    if state.phase != "board" or state.board is not None:
        fold.find(event, "paohuzi.T01", "牌局已建或已发牌后又建牌局 board_created after the board was set or the deal began", ART_DEAL)
        return state
    deck = _deck(fold, event, event.deck) if event.deck is not None else None
    return state.replace(board=event.board, commitment=event.commitment, deck=deck)


def _deck(fold: _Fold, event: Event, cards: list[str]) -> tuple[int, ...] | None:
    deck = tuple(card_numbers(cards))
    problem = deck_problem(deck)
    if problem:
        fold.find(event, "paohuzi.D01", problem, ART_DEAL)
        return None
    return deck


def _on_reveal(state: State, event: BoardRevealed, fold: _Fold, facts: Facts) -> State:
    deck = _deck(fold, event, event.deck)
    if deck is None:
        return state
    if state.commitment is not None and commitment(deck, event.salt) != state.commitment:
        fold.find(event, "paohuzi.D02", f"公开的牌序散列为 {commitment(deck, event.salt)}，与承诺的 {state.commitment} 不符 "
                                        f"revealed deck hashes to {commitment(deck, event.salt)}, committed {state.commitment}", ART_DEAL)
        return state
    if state.deck is not None and state.deck != deck:
        fold.find(event, "paohuzi.D02", "公开的牌序与建局时的牌序不同 revealed deck differs from the deck of board_created", ART_DEAL)
        return state
    if fold.dealt is not None and not _deal_matches(fold, event, deck, state.dealer, fold.dealt):
        return state
    if state.liangzhang is not None and deck[LIANGZHANG_INDEX] != state.liangzhang:
        shown = names([state.liangzhang])
        fold.find(event, "paohuzi.D04", f"亮张{shown}不是公开牌序中的那张 亮张 {shown} is not the revealed deck's", ART_LIANG)
        return state
    if tuple(deck[WALL_START:WALL_START + len(state.drawn)]) != state.drawn:
        fold.find(event, "paohuzi.D05", "已翻出的墩牌与公开的牌序不同 the wall cards turned so far differ from the revealed deck", ART_DEAL)
        return state
    wall = deck[WALL_START + len(state.drawn):] if fold.dealt is not None else ()
    return state.replace(deck=deck, wall=wall)


def _deal_matches(fold: _Fold, event: Event, deck: tuple[int, ...], dealer: int, hands: list[list[int]]) -> bool:
    expected = deal_hands(deck, dealer)
    seats = [s for s in range(SEATS) if expected[s] != hands[s]]
    if seats:
        zh, en = seat_list_zh_en(seats)
        fold.find(event, "paohuzi.D03", f"{zh}的手牌不符合牌局的牌序 hands of {en} are not the board's deck order", ART_DEAL)
    return not seats


def _on_deal(state: State, event: Dealt, fold: _Fold, facts: Facts) -> State:
    if state.phase != "board":
        fold.find(event, "paohuzi.T01", "一局中第二次发牌 a second deal in one game", ART_DEAL)
        return state
    hands = [sorted(card_numbers(h)) for h in event.hands]
    dealt = counts_of(chain.from_iterable(hands))
    if len(hands) != SEATS or any(len(h) != HAND_SIZE for h in hands) or max(dealt) > 4:
        fold.find(event, "paohuzi.D07", f"发牌须从一副牌发出 {SEATS} 手各 {HAND_SIZE} 张 "
                                        f"the deal must give {SEATS} hands of {HAND_SIZE} cards from one deck", ART_DEAL)
        hands = (hands + [[], [], []])[:SEATS]
        dealt = counts_of(chain.from_iterable(hands))
    if event.dealer != state.dealer:
        fold.find(event, "paohuzi.D08", f"庄家座位{event.dealer}不是开局指定的座位{state.dealer} "
                                        f"dealer {event.dealer} is not seat {state.dealer} named first by game.started", ART_DEAL)
    if state.deck is not None and not _deal_matches(fold, event, state.deck, event.dealer, hands):
        state = state.replace(deck=None)
    fold.dealt = hands
    fold._set_left_wall(dealt)
    return rules.deal(state, event.dealer, hands)


def _on_liang(state: State, event: LiangzhangRevealed, fold: _Fold, facts: Facts) -> State:
    if state.phase != "liang":
        fold.find(event, "paohuzi.T01", "发牌阶段以外亮张 亮张 outside the deal", ART_LIANG)
        return state
    card = card_number(event.card)
    if state.deck is not None and state.deck[LIANGZHANG_INDEX] != card:
        shown, due = names([card]), names([state.deck[LIANGZHANG_INDEX]])
        fold.find(event, "paohuzi.D04", f"亮张{shown}不是牌序中的{due} 亮张 {shown} is not the deck's {due}", ART_LIANG)
        state = state.replace(deck=None, wall=())
    state = rules.reveal_liangzhang(state, card)
    fold._left_wall(card)
    fold.turn_end = event.ts
    fold.unlogged, fold.from_play = list(state.effects), False
    return state


# ---- play (第七–九条) ------------------------------------------------------------------


def _on_forced(state: State, event: Event, fold: _Fold, facts: Facts) -> State:
    kind = FORCED_KINDS[type(event)]
    card = card_number(event.card)  # type: ignore[attr-defined]
    fold.action = f"{kind} {card_id(card)}"
    fold.forced = True
    logged = (kind, event.seat, card)
    if logged in fold.unlogged:
        fold.unlogged.remove(logged)
        return state
    derived = "、".join(f"座位{s}{KIND_WORDS[k][0]}{names([c])}" for k, s, c in fold.unlogged) or "无"
    derived_en = ", ".join(f"{KIND_WORDS[k][1]} {names([c])} by seat {s}" for k, s, c in fold.unlogged) or "none"
    fold.find(event, "paohuzi.F01", f"记录为座位{event.seat}{KIND_WORDS[kind][0]}{names([card])}，按规则应为{derived} "
              f"logged forced {KIND_WORDS[kind][1]} {names([card])} by seat {event.seat}; the rules derive {derived_en}", "第四条 术语定义")
    return state


def _on_action(state: State, event: Event, fold: _Fold, facts: Facts) -> State:
    action = to_action(state, event)
    fold.action = _NOTATIONS.get(action) or action.notation()
    ts = event.ts
    fold.gaps[event.seq] = ts - fold.turn_end
    fold.turn_end = ts
    if state.phase == "end":
        done = action.said()
        fold.find(event, "paohuzi.X01", f"本局结束后又{done.zh} {done.en} after the end of the deal", ART_END)
        return state
    if not _seat_ok(fold, state, event, action):
        return state
    played = state  # a draw against the board's wall drops the deck, but a refused action leaves the state as it was
    if action.kind == "draw" and state.deck is not None:
        drawn = card_number(event.card)  # type: ignore[attr-defined]
        if drawn != state.wall[0]:
            got, top = names([drawn]), names([state.wall[0]])
            fold.find(event, "paohuzi.D05", f"摸到{got}，但牌局的墩顶是{top} drew {got} but the board's wall has {top} on top", ART_DEAL)
            played = state.replace(deck=None, wall=())
            action = to_action(played, event)
    pending = played.pending
    if pending is not None and getattr(event, "card", None) is not None and action.kind in ("chi", "peng", "pass"):
        if card_number(event.card) != pending.card:  # type: ignore[attr-defined]
            named, offered = names([card_number(event.card)]), names([pending.card])  # type: ignore[attr-defined]
            done = action.said()
            fold.find(event, "paohuzi.A26", f"{done.zh}指明{named}，但待吃碰的是{offered} {done.en} names {named} but {offered} is on "
                                            f"offer", ART_PLAY)
            return state
    try:
        check(played, action)
    except IllegalActionError as exc:
        _flow_finding(fold, event, (exc.code, exc.article, exc.said))
        return state
    new = rules_apply(played, action)
    fold.unlogged, fold.from_play = list(new.effects), True
    if action.kind == "hu":  # the action of a hu event, and of no other
        _hu_claims(fold, cast(Hu, event), new)
        fold.extra = hu_facts(new)
    return new


def _seat_ok(fold: _Fold, state: State, event: Event, action: Action) -> bool:
    seat = rules.current_seat(state)
    if seat is None and state.phase == "draw":
        seat = state.turn
    if event.seat == seat:
        return True
    if action.kind in ("hu", "peng", "chi") and event.seat is not None and not (fold.from_play and fold.unlogged):
        code, article, why = claim_out_of_turn(state, event.seat, action)
        fold.find(event, code, str(by_seat(action, event.seat, why)), article)
    elif any(o.seat == event.seat for o in state.offers[1:]):
        (stage, stage_en), done = stage_words(state.offers[0].stage), action.said()
        fold.find(event, "paohuzi.P01", f"座位{seat}尚未回应{stage}，座位{event.seat}就{done.zh} "
                  f"seat {event.seat} acts ({done.en}) before seat {seat} answered its {stage_en} offer", ART_PRIORITY)
    else:
        (phase, phase_en), done = PHASE_WORDS[state.phase], action.said()
        actor, actor_en = ("未指明座位的事件", "an event naming no seat") if event.seat is None else (f"座位{event.seat}", f"seat {event.seat}")
        if seat is None:
            why = Said(f"{phase}阶段不轮到任何座位，{actor}却{done.zh}", f"{actor_en} acts ({done.en}) while no seat is to act ({phase_en})")
        else:
            why = Said(f"轮到座位{seat}{phase}，{actor}却{done.zh}", f"{actor_en} acts ({done.en}) but seat {seat} is to act ({phase_en})")
        _flow_finding(fold, event, ("paohuzi.T01", ART_PLAY, why))
    return False


def _flow_finding(fold: _Fold, event: Event, problem: tuple[str, str | None, Said]) -> None:
    """Reports a problem; an action out of turn right after forced actions of play the log has not
    shown is reported as those actions skipped (F02), naming them (the deal's 提 explain nothing)."""
    code, article, why = problem
    if code == "paohuzi.T01" and fold.from_play and fold.unlogged:
        code, article, why = forced_problem(fold.unlogged, why)
    fold.find(event, code, str(why), article)


def _hu_claims(fold: _Fold, event: Hu, state: State) -> None:
    win = state.win
    assert win is not None
    result = win.result
    derived_card = card_id(win.card) if win.card is not None else None
    if event.card != derived_card:
        claimed_card = _card_said(event.card)
        derived_said = _card_said(derived_card)
        fold.find(event, "paohuzi.H05", f"申报胡的牌为{claimed_card.zh}，推导为{derived_said.zh} "
                  f"claimed winning card {claimed_card.en}, derived {derived_said.en}", "第八条")
    if event.huxi is not None and event.huxi != result.huxi:
        fold.find(event, "paohuzi.H01", f"申报 {event.huxi} 胡息，推导为 {result.huxi} 胡息 "
                                        f"claimed {event.huxi} 胡息, derived {result.huxi}", ART_HUXI)
    claimed = sorted(event.mingtang)
    derived = sorted(name for name, _ in result.mingtang)
    if claimed != derived and (event.mingtang or event.score is not None):
        fold.find(event, "paohuzi.H02", f"申报名堂为{'、'.join(claimed) or '无'}，推导为{'、'.join(derived) or '无'} "
                  f"claimed 名堂 {', '.join(claimed) or 'none'}, derived {', '.join(derived) or 'none'}", ART_MINGTANG)
    if event.score is not None and event.score != 2 * result.score.s:
        fold.find(event, "paohuzi.H03", f"申报本局得分 {event.score}，推导为 {2 * result.score.s} "
                  f"claimed deal score {event.score}, derived {2 * result.score.s}", ART_SCORE)
    if event.groups:
        mine = sorted(tuple(sorted(g.cards)) for g in result.groups)
        theirs = sorted(tuple(sorted(card_number(c) for c in g.cards)) for g in event.groups)
        if mine != theirs:
            shown = " ".join(names(g) for g in mine)
            fold.find(event, "paohuzi.H04", f"申报的组牌不是胡息最大的组法（应为 {shown}） "
                                            f"claimed decomposition is not the maximising one ({shown})", "第八条")


def _card_said(card: str | None) -> Said:
    """Returns a claimed or derived winning card as the board shows it, or that the hu is on the seat's own cards."""
    return Said(names([card_number(card)]), names([card_number(card)])) if card is not None else Said("无（自摸）", "none (own cards)")


class _Census:
    """`rules.census_of` of the states of a replay, kept from one state to the next by recounting
    only the hands, table groups and discard rows that changed (frozen tuples: unchanged ones are
    the same objects), and the loose cards: the card on offer outside a hand and the winning card."""

    def __init__(self) -> None:
        self.counts = [0] * N_VALUES
        self.hands: tuple[Counts, ...] = ((),) * SEATS
        self.melds: tuple[tuple[Group, ...], ...] = ((),) * SEATS
        self.discards: tuple[tuple[int, ...], ...] = ((),) * SEATS
        self.on_offer = -1
        self.won = -1

    def of(self, known: _StateFacts) -> list[int]:
        """Returns the count of every card outside the wall in the state `known` holds the fields of (to be read, not kept)."""
        counts = self.counts
        hands, melds, discards = known.hands, known.melds, known.discards
        if hands is not self.hands:
            for old, new in zip(self.hands, hands):
                if new is not old:
                    _recount(counts, old, new)
            self.hands = hands
        if melds is not self.melds:
            for old_groups, new_groups in zip(self.melds, melds):
                if new_groups is not old_groups:
                    _regroup(counts, old_groups, new_groups)
            self.melds = melds
        if discards is not self.discards:
            for old_row, new_row in zip(self.discards, discards):
                if new_row is not old_row:
                    _rerow(counts, old_row, new_row)
            self.discards = discards
        pending, win = known.pending, known.win
        self.on_offer = _move(counts, self.on_offer, pending.card if pending is not None and not pending.in_hand else -1)
        self.won = _move(counts, self.won, win.card if win is not None and win.card is not None else -1)
        return counts


def _recount(counts: list[int], old: Counts, new: Counts) -> None:
    """Replaces a hand's cards in `counts` (an empty `old`: none yet)."""
    if len(old) != len(new):
        for c, n in enumerate(old):
            counts[c] -= n
        for c, n in enumerate(new):
            counts[c] += n
        return
    for c in range(len(new)):
        if new[c] != old[c]:
            counts[c] += new[c] - old[c]


def _regroup(counts: list[int], old: tuple[Group, ...], new: tuple[Group, ...]) -> None:
    """Replaces a seat's table groups in `counts`: only the groups added when the old ones are kept."""
    kept = len(old) if new[:len(old)] == old else 0
    for group in old[kept:]:
        _add(counts, group.cards, -1)
    for group in new[kept:]:
        _add(counts, group.cards, 1)


def _rerow(counts: list[int], old: tuple[int, ...], new: tuple[int, ...]) -> None:
    """Replaces a discard row in `counts`: only the cards added when the row just grew."""
    kept = len(old) if new[:len(old)] == old else 0
    _add(counts, old[kept:], -1)
    _add(counts, new[kept:], 1)


def _add(counts: list[int], cards: tuple[int, ...], n: int) -> None:
    for c in cards:
        counts[c] += n


def _move(counts: list[int], old: int, new: int) -> int:
    """Moves one loose card (-1: none) in `counts`; returns the new one."""
    if new != old:
        if old >= 0:
            counts[old] -= 1
        if new >= 0:
            counts[new] += 1
    return new


_NO_FACTS: Final[Facts] = {}
"""The `facts` every handler is given and leaves alone (the step's facts are built after it: `_Fold._facts`)."""


_HANDLERS: Final[dict[type, Handler[State, _Fold]]] = {
    GameStarted: _on_start, MoveTimeUsed: _on_move_time, BoardCreated: _on_board, BoardRevealed: _on_reveal,
    Dealt: _on_deal, LiangzhangRevealed: _on_liang, Huangzhuang: _on_huangzhuang, GameEnded: _on_ended,
    **{kind: _on_forced for kind in FORCED_KINDS}, **{kind: _on_action for kind in ACTION_EVENTS},
}
"""The handler of each kind of event; other kinds (penalties, draws offered …) change nothing."""


_NOTATIONS: Final[dict[Action, str]] = {a: a.notation() for a in (DRAW, PENG, HU, PASS, *DISCARDS, *DRAWS)}
"""The notation of the actions an event names most (all but 吃), written once."""


def rules_apply(state: State, action: Action) -> State:
    """Applies a legal action (the dispatcher shared by `apply_action` and the fold)."""
    if action.kind == "draw":
        card = action.card if action.card >= 0 else state.wall[0]
        return rules.draw(state, card)
    if action.kind == "discard":
        return rules.discard(state, action.card)
    return rules.answer(state, action)


def replay(events: Iterable[Event], strict: bool = False) -> Iterator[Step]:
    """Folds a deal's events (starting with `game.started`) into steps (replay.fold.checked_steps).

    :raises NoStartError: when the first event is not a paohuzi `game.started`.
    :raises StrictReplayError: in strict mode, at the first error finding.
    """
    return checked_steps("paohuzi", PaohuziProfile, steps, events, strict)


def steps(start: GameStarted, events: Iterator[Event]) -> Iterator[Step]:
    """Folds the events after a checked start into steps, every finding collected."""
    fold = _Fold()
    yield fold.step(start)
    for event in events:
        yield fold.step(event)
