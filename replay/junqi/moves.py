"""Movement legality (junqi.md §6, 第四条 三–六, 第七条): the checks that name the broken rule, and
the move generator the bot, perft and the no-legal-move rule use."""

from __future__ import annotations

from typing import Final

from replay.junqi.board import IS_CAMP, IS_HQ, NAMES, Board, owner_of
from replay.junqi.pieces import ENGINEER, KIND_NAMES, is_movable, kind_of, seat_of
from replay.junqi.state import JunqiState, Move, Settings, is_enemy, settings
from replay.protocol import TERMINAL, IllegalActionError, Said
from schemas.junqi import JunqiProfile

ARTICLES: Final = {
    "M01": "第九条", "M02": "第七条", "M03": "第九条", "M04": "第七条", "M05": "第八条",
    "M06": "第四条 四", "M07": "第七条", "M08": "第四条 七", "M09": "第四条 三", "M10": "第四条 五",
    "M12": "第七条",
}
"""The article of the rule book each move code rests on; M10 cites 第四条 三 (a camp's one step) or
第四条 六 (a road's one step) instead when the move leaves a camp or the railway."""


def geometry(profile: JunqiProfile) -> Board:
    """Returns the board graph under the profile's arc settings."""
    return settings(profile).geo


def is_frozen(point: int, value: int, profile: JunqiProfile) -> bool:
    """Tells whether the piece on an HQ may never move again (第四条 四; `hq_freezes_any_piece`:
    when false, only a piece in its own seat's HQ is frozen)."""
    # The seed (第四条 四) names pieces placed in (摆入) or attacked into (攻入) an HQ; junqi.md §6.5
    # freezes any piece that ends there, a plain move into an empty HQ included. The seed does not
    # say otherwise for that case, so the engine follows junqi.md.
    return IS_HQ[point] and (profile.hq_freezes_any_piece or owner_of(point) == seat_of(value))


def is_protected(point: int, value: int, profile: JunqiProfile) -> bool:
    """Tells whether a piece is safe from attack in a 行营 (第四条 三; `camp_protects_any_occupant`:
    when false, only a camp of the occupant's own arm protects it)."""
    return IS_CAMP[point] and (profile.camp_protects_any_occupant or owner_of(point) == seat_of(value))


def _fail(code: str, message: Said) -> IllegalActionError:
    return IllegalActionError(f"junqi.{code}", message, ARTICLES[code])


def check_move(state: JunqiState, seat: int, frm: int, to: int) -> None:
    """Checks a move by `seat` in the order of §6.1 and returns when it is legal.

    :raises IllegalActionError: with the first broken rule's code (M01–M10) and article.
    """
    cells, profile, to_move = state.board, state.profile, state.to_move
    if state.outcome is not None or to_move == TERMINAL:
        raise _fail("M01", Said("对局已结束", "the game is over"))
    if not state.alive[seat]:
        raise _fail("M03", Said(f"座位{seat}已出局", f"seat {seat} is eliminated"))
    if seat != to_move:
        raise _fail("M02", Said(f"轮到座位{to_move}，座位{seat}却走了", f"seat {seat} moved but it is seat {to_move}'s turn"))
    mover = cells[frm]
    if mover == 0 or (mover - 1) & 3 != seat:
        raise _fail("M04", Said(f"{NAMES[frm]} 上没有座位{seat}的棋子", f"{NAMES[frm]} holds no piece of seat {seat}"))
    if mover < 9:  # cells 1–8 are 军旗 and 地雷 (kinds 0 and 1)
        raise _fail("M05", Said(f"{NAMES[frm]} 上的{KIND_NAMES[kind_of(mover)]}不能移动",
                                f"{KIND_NAMES[kind_of(mover)]} on {NAMES[frm]} never moves"))
    if IS_HQ[frm] and is_frozen(frm, mover, profile):
        raise _fail("M06", Said(f"{NAMES[frm]} 上的{KIND_NAMES[kind_of(mover)]}在大本营中，不能再移动",
                                f"{KIND_NAMES[kind_of(mover)]} on {NAMES[frm]} stands in a 大本营 and never moves"))
    if to == frm:
        raise _fail("M07", Said(f"从 {NAMES[frm]} 走到原位", f"the move goes from {NAMES[frm]} to itself"))
    target = cells[to]
    if target:
        if not is_enemy(seat, seat_of(target)):
            own = seat_of(target) == seat
            raise _fail("M08", Said(f"{NAMES[to]} 上是{'本方' if own else '盟友'}的棋子",
                                    f"{NAMES[to]} holds a piece of {'the same seat' if own else 'the partner'}"))
        if is_protected(to, target, profile):
            raise _fail("M09", Said(f"{NAMES[to]} 上的敌方棋子在行营中，不受攻击",
                                    f"the enemy piece on {NAMES[to]} stands in a 行营 and cannot be attacked"))
    geo = geometry(profile)
    if not has_route(cells, geo, frm, to, kind_of(mover) == ENGINEER):
        article, reason = _route_problem(cells, geo, frm, to)
        raise IllegalActionError("junqi.M10", Said(f"从 {NAMES[frm]} 到 {NAMES[to]} 无路可走：{reason.zh}",
                                                   f"no route from {NAMES[frm]} to {NAMES[to]}: {reason.en}"), article)


def has_route(cells: tuple[int, ...], geo: Board, frm: int, to: int, engineer: bool) -> bool:
    """Tells whether a route exists: one step along any edge, a straight unobstructed run along a
    railway line (§6.3), or for a 工兵 any unobstructed rail path (§6.4)."""
    # 第四条 五 lets non-engineers run straight but not turn. Following an arc counts as straight
    # (junqi.md §6.3, every source); `arc_straight_for_non_engineer = false` takes the strict reading.
    if to in geo.neighbours[frm]:
        return True
    if not (geo.is_rail[frm] and geo.is_rail[to]):
        return False
    if engineer:
        return to in _engineer_reach(cells, geo, frm, stop=to)
    return any(all(cells[p] == 0 for p in mids) for mids in geo.between.get((frm, to), ()))


def _route_problem(cells: tuple[int, ...], geo: Board, frm: int, to: int) -> tuple[str, Said]:
    """Explains why has_route failed: the article of the movement rule broken, and why."""
    if IS_CAMP[frm]:
        return "第四条 三", Said("行营中的棋子一次只走一步", "a piece in a 行营 moves one step at a time")
    if not (geo.is_rail[frm] and geo.is_rail[to]):
        return "第四条 六", Said("两点不相邻，也不都在铁路线上（公路线只走一步）",
                                 "not adjacent and not both on the railway (off the railway a piece moves one step)")
    lines = geo.between.get((frm, to))
    if not lines:
        if kind_of(cells[frm]) != ENGINEER:
            return ARTICLES["M10"], Said("不在同一条铁路线上（工兵以外的棋子不能转弯）", "not on one railway line (a non-engineer cannot turn)")
        return ARTICLES["M10"], Said("没有铁路通路", "no rail path")
    blockers = sorted({NAMES[p] for mids in lines for p in mids if cells[p]})
    return ARTICLES["M10"], Said(f"{'、'.join(blockers)} 挡住了铁路", f"{', '.join(blockers)} blocks the railway")


def _engineer_reach(cells: tuple[int, ...], geo: Board, frm: int, stop: int = -1) -> set[int]:
    """Returns the rail points a 工兵 reaches: BFS over rail edges, never through an occupied point.
    The search ends early once it reaches `stop`, when given: has_route asks about one point."""
    seen = {frm}
    queue = [frm]
    rail_nb = geo.rail_neighbours
    for p in queue:  # grows while it is read: breadth first
        if stop in seen:
            break
        for q in rail_nb[p]:
            if q not in seen:
                seen.add(q)
                if cells[q] == 0:
                    queue.append(q)
    seen.discard(frm)
    return seen


def destinations(cells: tuple[int, ...], geo: Board, frm: int) -> set[int]:
    """Returns every point the piece on `frm` could reach before own/ally/camp filtering."""
    reach = set(geo.neighbours[frm])
    if geo.is_rail[frm]:
        if kind_of(cells[frm]) == ENGINEER:
            reach |= _engineer_reach(cells, geo, frm)
        else:
            for ray in geo.rays[frm]:
                for p in ray:
                    reach.add(p)
                    if cells[p]:
                        break
    return reach


def _targets(state: JunqiState, geo: Board, frm: int, seat: int) -> list[int]:
    """Returns the legal destinations of the piece on `frm`, sorted."""
    cells, profile = state.board, state.profile
    out = []
    for to in destinations(cells, geo, frm):
        target = cells[to]
        if target == 0 or (is_enemy(seat, seat_of(target)) and not is_protected(to, target, profile)):
            out.append(to)
    out.sort()
    return out


def movable_origins(state: JunqiState, seat: int) -> list[int]:
    """Returns the points of seat's pieces that may move at all (movable kind, not frozen in an HQ)."""
    cells, profile = state.board, state.profile
    return [
        p for p, v in enumerate(cells)
        if v and seat_of(v) == seat and is_movable(kind_of(v)) and not is_frozen(p, v, profile)
    ]


def legal_moves(state: JunqiState, seat: int) -> list[Move]:
    """Returns every legal move of `seat` in the position, ordered by origin then destination."""
    geo = geometry(state.profile)
    return [Move(frm, to) for frm in movable_origins(state, seat) for to in _targets(state, geo, frm, seat)]


def has_legal_move(state: JunqiState, seat: int) -> bool:
    """Tells whether `seat` has any legal move (the 无子可走 test of §7.3), stopping at the first."""
    return can_move(state.board, settings(state.profile), seat)


def can_move(cells: tuple[int, ...], rules: Settings, seat: int) -> bool:
    """Tells whether `seat` has any legal move on the board `cells` under the profile's settings.

    A piece with no usable neighbour cannot run along a rail either (every run starts next door),
    so one step to an empty point or an unprotected enemy decides. The seat's own arm is scanned
    first because that is where its pieces mostly stand.
    """
    profile = rules.profile
    neighbours = rules.geo.neighbours
    for frm in SCAN_ORDER[seat]:
        v = cells[frm]
        if v < 9 or (v - 1) & 3 != seat or (IS_HQ[frm] and is_frozen(frm, v, profile)):
            continue  # empty, 军旗/地雷 (cells 1–8), another seat's piece, or frozen in an HQ
        for to in neighbours[frm]:
            target = cells[to]
            if target == 0 or ((target - 1 - seat) & 1 and not is_protected(to, target, profile)):
                return True
    return False


SCAN_ORDER: Final = tuple(tuple(range(30 * s, 30 * s + 30)) + tuple(p for p in range(129) if not 30 * s <= p < 30 * s + 30)
                          for s in range(4))
"""Per seat, every point with the seat's own arm first."""
