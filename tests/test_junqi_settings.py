"""The disputed readings of junqi.md §12 / §13 as profile settings: each non-default value changes
exactly what the rules file says it does."""

from __future__ import annotations

import random

from msgspec.structs import replace

from replay.junqi import ENGINE
from replay.junqi.board import NAMES
from replay.junqi.moves import destinations, geometry, legal_moves
from replay.junqi.perft import parse_position
from replay.junqi.state import Move
from schemas.junqi import FlagRevealed, LayoutSubmitted, Moved
from tests.junqi_support import codes, point, profile, scripted, start


def test_arcs_not_straight_for_non_engineers() -> None:
    """§6.3 `arc_straight_for_non_engineer = false`: T1 loses the five points beyond the S–W arc."""
    state = parse_position("S S51=排长 S62=军旗", profile(arc_straight_for_non_engineer=False))
    reach = {NAMES[q] for q in destinations(state.board, geometry(state.profile), point("S51"))}
    assert len(reach) == 18 and not reach & {"W15", "W25", "W35", "W45", "W55"}


def _mirror(name: str) -> str:
    return f"{name[:2]}{6 - int(name[2])}" if name[0] in "SWNE" else name


def test_official_col_origin_owner_right() -> None:
    """§2.2 `official_col_origin = owner_right`: a log with columns counted from the owner's right
    replays exactly like the same game in owner-left notation."""
    events = ENGINE.bot_game(start(), random.Random(17))
    mirrored = [replace(events[0], profile=profile(official_col_origin="owner_right"))]
    for e in events[1:]:
        if isinstance(e, LayoutSubmitted):
            e = replace(e, pieces=[(_mirror(p), k) for p, k in e.pieces])
        elif isinstance(e, Moved):
            e = replace(e, from_=_mirror(e.from_), to=_mirror(e.to))
        elif isinstance(e, FlagRevealed):
            e = replace(e, point=_mirror(e.point))
        mirrored.append(e)
    ours, theirs = list(ENGINE.replay(events)), list(ENGINE.replay(mirrored))
    assert codes(mirrored) == []
    assert [s.state.board for s in ours] == [s.state.board for s in theirs]


def test_hq_freezes_only_own_hq_when_off() -> None:
    """§6.5 `hq_freezes_any_piece = false`: a piece in an enemy HQ moves on; in its own HQ it stays."""
    text = "S W62=军长 S64=师长 S62=军旗 S51=工兵\nW W51=工兵 W64=军旗\nN N62=军旗 N51=工兵\nE E62=军旗 E51=工兵"
    origins = lambda p: {NAMES[m.frm] for m in legal_moves(parse_position(text, p), 0)}  # noqa: E731
    assert origins(profile()) == {"S51"}
    assert origins(profile(hq_freezes_any_piece=False)) == {"S51", "W62"}


def test_camp_protects_only_in_own_arm_when_off() -> None:
    """§4.3 `camp_protects_any_occupant = false`: an enemy in S's camp can be attacked; in its own camp not."""
    text = "S S12=军长 S62=军旗 W14=司令\nW S22=排长 W24=排长 W62=军旗\nN N62=军旗 N51=工兵\nE E62=军旗 E51=工兵"
    targets = lambda p: {NAMES[m.to] for m in legal_moves(parse_position(text, p), 0)} & {"S22", "W24"}  # noqa: E731
    assert targets(profile()) == set()
    assert targets(profile(camp_protects_any_occupant=False)) == {"S22"}


def test_elimination_resets_quiet() -> None:
    """§8.2 `elimination_resets_quiet`: a no-move elimination restarts the quiet count."""
    text = "turn S\nquiet 10\nS S13=工兵 S62=军旗\nW W62=军旗 W52=地雷\nN N62=军旗 N51=工兵\nE E62=军旗 E51=工兵"
    for setting, quiet in ((False, 11), (True, 0)):
        state = ENGINE.apply_action(parse_position(text, profile(elimination_resets_quiet=setting)), Move(point("S13"), point("S12")))
        assert (state.alive[1], state.quiet) == (False, quiet)


def test_draw_voters_alive_only() -> None:
    """§8.4 `draw_voters = alive_only`: with W out, S, N and E agreeing is enough."""
    lines = ["S12>S22", "resign:W", "offer:N", "accept:E"]
    states = [s.state for s in ENGINE.replay(scripted(lines + ["accept:S"], draw_voters="alive_only"))]
    assert states[-1].outcome is not None and states[-1].outcome.termination == "DRAW_AGREED"
    states = [s.state for s in ENGINE.replay(scripted(lines + ["accept:S"]))]
    assert states[-1].outcome is None and states[-1].draw_votes == (0, 2, 3)


def test_max_draw_offers() -> None:
    """§8.4 `max_draw_offers`: an offer beyond the limit is reported (E03) and ignored."""
    assert codes(scripted(["offer:S", "decline:W", "offer:S"], max_draw_offers=1)) == ["junqi.E03"]


def test_first_seat_from_the_profile() -> None:
    """§7.1 `first_seat`: a seat number in the profile overrides the log's `first`."""
    events = scripted(["E12>E22", "S12>S22"], first=0, first_seat=3)
    assert codes(events) == []
    assert [s.state.to_move for s in ENGINE.replay(events)][-3:] == [3, 0, 1]
