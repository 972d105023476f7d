"""Replay of logged deals: facts, verifiable deals (第五条), planted illegal events, forced-action
checks, claimed 胡息/名堂/score and result checks (paohuzi.md §4–§10, §14)."""

from __future__ import annotations

import random

import msgspec
import pytest

from replay.paohuzi import ENGINE, check_board_deals, play_board
from replay.paohuzi.cards import card_id, full_deck
from replay.paohuzi.rules import census_of
from replay.paohuzi.state import Offer
from replay.protocol import NoStartError, StrictReplayError
from schemas.common import GameEnded, MoveTimeUsed
from schemas.paohuzi import BoardCreated, BoardRevealed, Dealt, Discarded, Drawn, Hu, Huangzhuang, LiangzhangRevealed, Wei
from tests.paohuzi_support import codes, last_state, start_event

replace = msgspec.structs.replace


def game(seed: int, dealer: int = 0, termination: str | None = None) -> list:
    """Returns the first bot deal from `seed` on that ends with `termination` (any when None)."""
    for s in range(seed, seed + 200):
        events = ENGINE.bot_game(start_event(dealer=dealer), random.Random(s))
        assert isinstance(events[-1], GameEnded)
        if termination is None or events[-1].termination == termination:
            print(f"bot seed={s}")
            return events
    raise AssertionError("no such deal in 200 seeds")


def first(events: list, kind: type) -> int:
    return next(i for i, e in enumerate(events) if isinstance(e, kind))


def planted(events: list, index: int, **changes: object) -> list:
    """The log up to `index` with that event changed (and nothing after it)."""
    return events[:index] + [replace(events[index], **changes)]


def test_bot_deal_replays_clean_with_facts() -> None:
    """第七条: a bot deal replays with no finding; move events carry seat, action and 胡息 totals."""
    events = game(1)
    steps = list(ENGINE.replay(events))
    assert not [f for s in steps for f in s.findings]
    moves = [s for s in steps if isinstance(s.event, Discarded)]
    assert moves and all(s.facts["action"].startswith("discard ") and s.facts["seat"] == s.event.seat for s in moves)
    assert {"huxi_0", "huxi_1", "huxi_2", "could_act", "forced", "wall"} <= set(steps[-1].facts)


def test_claims_match_and_outcome() -> None:
    """第十条/第十一条: the bot's game.ended claim matches the derived outcome (zero-sum points)."""
    events = game(3, termination="HU")
    outcome = ENGINE.outcome(last_state(events))
    assert outcome is not None and list(outcome.points) == events[-1].points and sum(outcome.points) == 0


def test_discard_not_in_hand() -> None:
    """第七条: a discard of a card the seat does not hold is paohuzi.A10."""
    events = game(5)
    i = first(events, Discarded)
    state = list(ENGINE.replay(events[:i]))[-1].state
    missing = next(c for c in range(20) if state.hands[events[i].seat][c] == 0)
    assert codes(planted(events, i, card=card_id(missing))) == ["paohuzi.A10"]


def test_out_of_turn() -> None:
    """第七条: an action by a seat that is not to act is paohuzi.T01."""
    events = game(5)
    i = first(events, Discarded)
    assert codes(planted(events, i, seat=(events[i].seat + 1) % 3)) == ["paohuzi.T01"]


def test_priority_violation() -> None:
    """第九条: a later-priority seat answering before the seat ahead of it is paohuzi.P01."""
    for seed in range(300):
        events = ENGINE.bot_game(start_event(), random.Random(seed))
        for i, step in enumerate(ENGINE.replay(events)):
            offers: tuple[Offer, ...] = step.state.offers if step.state is not None else ()
            if len(offers) >= 2 and offers[0].seat != offers[1].seat:
                nxt = events[i + 1]
                if getattr(nxt, "seat", None) == offers[0].seat and nxt.kind == "paohuzi.passed":
                    print(f"bot seed={seed}")
                    assert codes(planted(events, i + 1, seat=offers[1].seat)) == ["paohuzi.P01"]
                    return
    raise AssertionError("no contested card found")


def test_logged_forced_action_is_checked() -> None:
    """§14: a logged forced 偎 the rules do not derive is paohuzi.F01; logs may omit forced events."""
    events = game(7)
    i = first(events, Discarded)
    bogus = Wei(stream=events[i].stream, seq=i + 1, ts=events[i].ts, seat=events[i].seat, card=events[i].card)
    assert codes(events[: i + 1] + [bogus]) == ["paohuzi.F01"]
    forced = {"paohuzi.wei", "paohuzi.chou_wei", "paohuzi.ti", "paohuzi.pao"}
    stripped = [e for e in events if e.kind not in forced]
    stripped = [replace(e, seq=n) for n, e in enumerate(stripped)]
    assert codes(stripped) == []


def test_tampered_reveal_against_commitment() -> None:
    """第五条: a revealed deck that differs from its SHA-256 commitment is paohuzi.D02."""
    events = game(9)
    i = first(events, BoardRevealed)
    deck = list(events[i].deck)
    deck[0], deck[-1] = deck[-1], deck[0]
    assert deck != events[i].deck
    assert codes(events[:i] + [replace(events[i], deck=deck)] + events[i + 1:]) == ["paohuzi.D02"]


@pytest.mark.parametrize(
    ("kind", "code"),
    [(Dealt, "paohuzi.D03"), (LiangzhangRevealed, "paohuzi.D04"), (Drawn, "paohuzi.D05")],
)
def test_deal_differs_from_deck(kind: type, code: str) -> None:
    """第五条/第六条: dealt hands, the 亮张 or a wall card that differ from the board's deck order."""
    events = game(11)
    i = first(events, kind)
    if kind is Dealt:
        hands = [list(h) for h in events[i].hands]
        j = next(k for k, c in enumerate(hands[1]) if c not in hands[0])
        hands[0][0], hands[1][j] = hands[1][j], hands[0][0]
        change: dict[str, object] = {"hands": hands}
    else:
        visible = [c for h in events[first(events, Dealt)].hands for c in h]
        change = {"card": next(card_id(c) for c in range(20) if visible.count(card_id(c)) < 3 and card_id(c) != events[i].card)}
    assert codes(planted(events, i, **change)) == [code]


def test_malformed_deck_and_deal() -> None:
    """第五条: a deck that is not 4 × 20 cards (D01), a deal not 3 × 20 (D07), a dealer other than `first` (D08)."""
    events = game(13)
    i = first(events, BoardRevealed)
    assert codes(planted(events, i, deck=events[i].deck[:79] + ["x1"])) == ["paohuzi.D01"]
    j = first(events, Dealt)
    short = [events[j].hands[0][:19], *events[j].hands[1:]]
    assert "paohuzi.D07" in codes(planted(events, j, hands=short))
    assert codes(planted(events, j, dealer=1)) == ["paohuzi.D08", "paohuzi.D03"]


def test_conservation_with_unknown_wall() -> None:
    """§14: with only a commitment, a drawn card whose four copies are all visible breaks conservation (C01)."""
    events = game(15)
    hidden = [e for e in events if not isinstance(e, BoardRevealed)]
    hidden = [replace(e, seq=n) for n, e in enumerate(hidden)]
    assert codes(hidden) == []
    steps = list(ENGINE.replay(hidden))
    for i, step in enumerate(steps[:-1]):
        if isinstance(hidden[i + 1], Drawn):
            full = [c for c, n in enumerate(census_of(step.state)) if n == 4]
            if full:
                assert codes(planted(hidden, i + 1, card=card_id(full[0]))) == ["paohuzi.C01"]
                return
    raise AssertionError("no draw after a card was fully visible")


def test_two_tables_of_one_board() -> None:
    """第五条 / tournament.md §2: every table of a board gets the same deck; a differing table is paohuzi.D06."""
    deck = full_deck()
    random.Random(17).shuffle(deck)
    t1 = play_board(start_event(stream="r1-t1-b1"), deck, random.Random(1))
    t2 = play_board(start_event(stream="r1-t2-b1"), deck, random.Random(2))
    assert codes(t1) == codes(t2) == []
    assert check_board_deals([t1, t2]) == []
    other = list(deck)
    other[70], other[75] = other[75], other[70]
    if other == deck:
        other[0], other[79] = other[79], other[0]
    t3 = play_board(start_event(stream="r1-t3-b1"), other, random.Random(3))
    found = check_board_deals([t1, t2, t3])
    assert found and {f.code for f in found} == {"paohuzi.D06"} and {f.stream for f in found} == {"r1-t3-b1"}


def test_claimed_hu_figures_checked() -> None:
    """附录四/附录五/第十一条: claimed 胡息 (H01), 名堂 (H02), score (H03), decomposition (H04), winning card (H05)."""
    events = game(19, termination="HU")
    i = first(events, Hu)
    hu = events[i]
    assert codes(events[:i] + [replace(hu, huxi=hu.huxi + 3)]) == ["paohuzi.H01"]
    assert codes(events[:i] + [replace(hu, mingtang=[*hu.mingtang, "海胡"])]) == ["paohuzi.H02"]
    assert codes(events[:i] + [replace(hu, score=hu.score + 2)]) == ["paohuzi.H03"]
    assert codes(events[:i] + [replace(hu, groups=hu.groups[1:])]) == ["paohuzi.H04"]
    other = "x1" if hu.card != "x1" else "x2"
    assert codes(events[:i] + [replace(hu, card=other)]) == ["paohuzi.H05"]


def test_claimed_result_checked() -> None:
    """第十条: a game.ended claim that differs from the derived result is paohuzi.E01; 荒庄 claimed after a hu is E02."""
    events = game(21, termination="HU")
    end = events[-1]
    assert isinstance(end, GameEnded)
    assert codes(events[:-1] + [replace(end, points=[0, 0, 0])]) == ["paohuzi.E01"]
    fake = Huangzhuang(stream=end.stream, seq=end.seq, ts=end.ts)
    assert codes(events[:-1] + [fake]) == ["paohuzi.E02"]
    after = replace(events[first(events, Discarded)], seq=end.seq + 1)
    assert codes(events + [after]) == ["paohuzi.X01"]


def test_strict_mode_raises() -> None:
    """Protocol: strict replay raises StrictReplayError at the first error finding."""
    events = game(5)
    i = first(events, Discarded)
    with pytest.raises(StrictReplayError, match="paohuzi.T01"):
        list(ENGINE.replay(planted(events, i, seat=(events[i].seat + 1) % 3), strict=True))


def test_board_created_with_deck() -> None:
    """第五条: a board logged with its deck order in the clear replays like a committed one."""
    events = game(23)
    i = first(events, BoardRevealed)
    clear = BoardCreated(stream=events[i].stream, seq=1, ts=events[1].ts, board=events[i].board, deck=events[i].deck)
    rest = [replace(e, seq=n + 2) for n, e in enumerate(events[i + 1:])]
    assert codes([events[0], clear, *rest]) == []


def test_move_time_against_timestamps() -> None:
    """DESIGN schemas/: the time a seat used is checked against the timestamp gap (warning paohuzi.W01)."""
    events = game(25)
    i = next(n for n, e in enumerate(events) if e.kind == "game.move_time")
    tampered = events[:i] + [replace(events[i], ms=events[i].ms + 1)] + events[i + 1:]
    found = [f for s in ENGINE.replay(tampered) for f in s.findings]
    assert [(f.code, f.severity) for f in found] == [("paohuzi.W01", "warning")]


def test_conservation_counts_every_card() -> None:
    """§14: a deal with a fifth copy of a card breaks the deal (D07) and card conservation (C01)."""
    events = game(27)
    j = first(events, Dealt)
    hands = [list(h) for h in events[j].hands]
    value = max(set(hands[0]), key=lambda c: sum(h.count(c) for h in hands))
    spare = next(i for i, c in enumerate(hands[1]) if sum(h.count(c) for h in hands) < 4 and c != value)
    while sum(h.count(value) for h in hands) < 5:
        hands[1][spare] = value
        spare = next(i for i, c in enumerate(hands[1]) if c != value and sum(h.count(c) for h in hands) < 4)
    found = codes(planted(events, j, hands=hands))
    assert "paohuzi.D07" in found and "paohuzi.C01" in found


def test_setup_events_only_once() -> None:
    """第五条: a second board or a second deal in one game is paohuzi.T01."""
    events = game(29)
    j = first(events, Dealt)
    again = replace(events[j], seq=j + 1)
    assert codes(events[: j + 1] + [again]) == ["paohuzi.T01"]
    b = first(events, BoardCreated)
    assert codes(events[: j + 1] + [replace(events[b], seq=j + 1)]) == ["paohuzi.T01"]


def test_facts_for_the_audit() -> None:
    """tournament.md §3 / paohuzi.md §10: move-time steps carry the seat's running total; the hu step
    carries 胡息, 名堂, 囤, 番, S and the payer, which re-derive the points."""
    events = game(33, termination="HU")
    steps = list(ENGINE.replay(events))
    totals = [0, 0, 0]
    for step in steps:
        if step.event.kind == "game.move_time":
            assert isinstance(step.event, MoveTimeUsed) and step.event.seat is not None
            totals[step.event.seat] += step.event.ms
            assert step.facts["time_used"] == totals[step.event.seat]
    hu = next(s for s in steps if isinstance(s.event, Hu))
    s = hu.facts["score_s"]
    assert hu.facts["payer"] is None and hu.facts["tun"] * hu.facts["fan"] * PROFILE_BASE == s
    outcome = ENGINE.outcome(steps[-1].state)
    assert outcome is not None
    assert [2 * s if seat == hu.event.seat else -s for seat in range(3)] == list(outcome.points)


PROFILE_BASE = 1


def test_claim_names_the_card_on_offer() -> None:
    """第七条: a 吃/碰/pass naming a card other than the one on offer is paohuzi.A26."""
    events = game(35)
    i = next(n for n, e in enumerate(events) if e.kind == "paohuzi.passed" and e.card is not None)
    other = "x1" if events[i].card != "x1" else "x2"
    assert codes(planted(events, i, card=other)) == ["paohuzi.A26"]


def test_events_before_the_start() -> None:
    """第五条: a deal's events open with game.started; anything else first is refused as for every game (NoStartError)."""
    events = game(37)
    with pytest.raises(NoStartError, match=r"^paohuzi 对局须以它的 game.started 开始 a paohuzi replay opens with its "
                                           r"game.started, not paohuzi.board_created \(\S+ seq 0\)$"):
        list(ENGINE.replay([replace(events[1], seq=0)]))


def test_a_refused_draw_against_the_wall_keeps_the_board() -> None:
    """第五条/第七条 (issue 29.4, the fold's handlers return a state): a draw that contradicts the
    board's wall and is refused (D05, then T01: no draw is due) leaves the state as it was, so the
    board still checks the next wrong draw (D05 again) and the deal goes on clean."""
    events = game(11)
    steps = list(ENGINE.replay(events))
    i = next(n for n, s in enumerate(steps) if s.state is not None and s.state.phase == "offer" and s.state.deck is not None)
    state, drawn = steps[i].state, events[first(events, Drawn)]
    seat = state.offers[0].seat
    wrong = card_id(next(c for c in range(20) if c != state.wall[0]))
    bad = [replace(drawn, seq=10_000 + k, ts=events[i].ts, seat=seat, card=wrong) for k in range(2)]
    replayed = list(ENGINE.replay(events[: i + 1] + bad + events[i + 1:]))
    for step in replayed[i + 1:i + 3]:
        assert [f.code for f in step.findings] == ["paohuzi.D05", "paohuzi.T01"], step.facts
        assert step.facts["action"] == "draw" and (step.state.deck, step.state.wall) == (state.deck, state.wall)
    assert not [f for s in replayed[i + 3:] for f in s.findings]
