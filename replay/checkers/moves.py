"""Steps, hop chains and their checks (checkers.md §4): endpoint generation under a profile's
move options, witness-path validation, and the classification of illegal moves (§4.7)."""

from __future__ import annotations

from typing import Final, NamedTuple

import msgspec

from replay.checkers.board import (
    ADJACENT_HOPS,
    BIT,
    HOLES,
    HOP_BITS,
    HOP_BY_PAIR,
    HOP_GEOMETRY,
    LONG_HOPS,
    NEIGHBOUR_MASK,
    NEIGHBOURS,
    SIDE,
    TARGET,
    ids,
)
from replay.protocol import Said
from schemas.checkers import CheckersProfile


class MoveRules(NamedTuple):
    """The move options of a profile (§4.4–4.6), reduced to what the generator reads."""

    long_hops: bool
    land_forbidden: int
    end_forbidden: int
    lock: str

    @classmethod
    def of(cls, profile: CheckersProfile) -> MoveRules:
        """Returns the move options of a profile."""
        return cls(
            long_hops=profile.hop_mode == "equidistant",
            land_forbidden=SIDE if profile.side_triangles == "forbidden" else 0,
            end_forbidden=SIDE if profile.side_triangles != "free" else 0,
            lock=profile.goal_lock,
        )


DEFAULT_RULES: Final[MoveRules] = MoveRules.of(CheckersProfile())


class Reach(NamedTuple):
    """Where one piece can go: step endpoints, hop-chain endpoints, and each hop landing with the
    landing it came from (intermediate landings included, for paths)."""

    steps: tuple[int, ...]
    hops: tuple[int, ...]
    parents: dict[int, int]

    def endpoints(self) -> list[int]:
        """Returns every endpoint, steps first, then hop landings in discovery order."""
        return [*self.steps, *self.hops]

    def path(self, frm: int, to: int) -> tuple[int, ...]:
        """Returns the hop chain from `frm` to the landing `to`, both included."""
        out = [to]
        while out[-1] != frm:
            out.append(self.parents[out[-1]])
        return tuple(reversed(out))


def reach(seat: int, frm: int, occupied: int, rules: MoveRules = DEFAULT_RULES) -> Reach:
    """Returns where the piece of `seat` on `frm` can move; `occupied` holds every piece, the
    mover's own origin included (it counts as empty during the chain, §4.3)."""
    occ = occupied & ~BIT[frm]
    target = TARGET[seat]
    locked = rules.lock != "off" and bool(target & BIT[frm])
    blocked = occ | rules.land_forbidden
    steps = tuple(n for n in NEIGHBOURS[frm] if not blocked & BIT[n])
    parents: dict[int, int] = {}
    seen = BIT[frm]
    stack = [frm]
    chain_lock = rules.lock == "within_chain"
    while stack:
        x = stack.pop()
        stay_in = chain_lock and bool(target & BIT[x])
        for land in _landings(x, occ, rules.long_hops):
            bit = BIT[land]
            if seen & bit or blocked & bit or (stay_in and not target & bit):
                continue
            seen |= bit
            parents[land] = x
            stack.append(land)
    end_bad = rules.end_forbidden | (~target if locked else 0)
    if not end_bad:
        return Reach(steps, tuple(parents), parents)
    return Reach(tuple(n for n in steps if not end_bad & BIT[n]), tuple(n for n in parents if not end_bad & BIT[n]), parents)


def _landings(x: int, occ: int, long_hops: bool) -> list[int]:
    """Returns the hop landings from `x` in the occupancy `occ` (ordinary, or equidistant too)."""
    if not long_hops:
        return [land for over, land in ADJACENT_HOPS[x] if occ & BIT[over] and not occ & BIT[land]]
    return [land for pivot, clear, land in LONG_HOPS[x] if occ & pivot and not occ & clear]


def hop_path(frm: int, to: int, occupied: int) -> tuple[int, ...] | None:
    """Returns a shortest chain of ordinary hops from `frm` to `to`, or None (the endpoint check
    of §4.7 for a log without paths, under a profile without side or goal restrictions)."""
    occ = occupied & ~BIT[frm]
    parents = {frm: frm}
    frontier = [frm]
    while frontier:
        following = []
        for x in frontier:
            for over_bit, land, land_bit in HOP_BITS[x]:
                if occ & over_bit and not occ & land_bit and land not in parents:
                    parents[land] = x
                    if land == to:
                        out = [to]
                        while out[-1] != frm:
                            out.append(parents[out[-1]])
                        return tuple(reversed(out))
                    following.append(land)
        frontier = following
    return None


def is_reachable(seat: int, frm: int, to: int, occupied: int, rules: MoveRules = DEFAULT_RULES) -> bool:
    """Tells whether `to` is a legal endpoint for the piece on `frm` (§4.7: endpoint-only check)."""
    if BIT[to] & occupied or to == frm:
        return False
    r = reach(seat, frm, occupied, rules)
    return to in r.steps or to in r.hops


def all_moves(seat: int, own: int, occupied: int, rules: MoveRules = DEFAULT_RULES) -> list[tuple[int, int]]:
    """Returns every (from, to) move of `seat`, pieces in canonical order (§14.1: distinct endpoints)."""
    out: list[tuple[int, int]] = []
    for frm in ids(own):
        r = reach(seat, frm, occupied, rules)
        out.extend((frm, to) for to in r.endpoints())
    return out


class PathCheck(msgspec.Struct, frozen=True):
    """The verdict on a witness path: why it fails (None when it holds), its hop count, and
    whether it lands twice on one hole (§4.3). A struct, as `check.Verdict` is."""

    problem: Said | None
    hops: int
    revisits: bool


def check_path(seat: int, path: tuple[int, ...], occupied: int, rules: MoveRules = DEFAULT_RULES) -> PathCheck:
    """Checks a witness path segment by segment in the position before the move (§4.7)."""
    frm = path[0]
    occ = occupied & ~BIT[frm]
    if len(path) < 2:
        return PathCheck(Said("路径没有任何一段", "the path has no segment"), 0, False)
    if len(path) == 2 and BIT[path[1]] & NEIGHBOUR_MASK[frm]:
        return PathCheck(_land_problem(path[1], occ, rules, seat, frm, final=True), 0, False)
    if not rules.land_forbidden and not rules.end_forbidden and rules.lock == "off":
        # The common profile: only geometry and occupancy to check, in one tight loop.
        seen, revisits, a, long_hops = BIT[frm], False, frm, rules.long_hops
        for b in path[1:]:
            geometry = HOP_BY_PAIR[a * HOLES + b]
            if geometry is None or not occ & geometry[0] or occ & geometry[1] or not (geometry[2] or long_hops):
                break
            bit = BIT[b]
            if seen & bit:
                revisits = True
            seen |= bit
            a = b
        else:
            return PathCheck(None, len(path) - 1, revisits)
    return _explain_path(seat, path, occ, rules)


def _explain_path(seat: int, path: tuple[int, ...], occ: int, rules: MoveRules) -> PathCheck:
    """Walks a hop path segment by segment and names the first segment that fails."""
    frm = path[0]
    seen = BIT[frm]
    revisits = False
    target = TARGET[seat]
    for i, (a, b) in enumerate(zip(path, path[1:])):
        problem = _hop_problem(a, b, occ, rules)
        if problem is None and rules.lock == "within_chain" and target & BIT[a] and not target & BIT[b]:
            problem = Said(f"连跳中在 {a}>{b} 离开目标营", f"leaves the target camp at {a}>{b} inside the chain")
        if problem is None:
            problem = _land_problem(b, occ, rules, seat, frm, final=i == len(path) - 2)
        if problem:
            return PathCheck(Said(f"第 {a}>{b} 段{problem.zh}", f"segment {a}>{b} {problem.en}"), i, revisits)
        revisits = revisits or bool(seen & BIT[b])
        seen |= BIT[b]
    return PathCheck(None, len(path) - 1, revisits)


def _hop_problem(a: int, b: int, occ: int, rules: MoveRules) -> Said | None:
    """Returns why a→b is not a hop in `occ`, or None."""
    geometry = HOP_GEOMETRY.get((a, b))
    if geometry is None:
        return Said("既不是开头的一步也不是一跳（连跳不能夹走步）", "is neither a step at the start nor a hop (a chain never mixes them)")
    pivot, clear, adjacent = geometry
    if not adjacent and not rules.long_hops:
        return Said("是远跳（等距跳）", "is a long (equidistant) hop")
    if not occ & pivot:
        return Said(f"跳过的 {pivot.bit_length() - 1} 号孔是空的", f"jumps over the empty hole {pivot.bit_length() - 1}")
    if occ & clear:
        return Said("落在或越过有子的孔", "lands on or passes over an occupied hole")
    return None


def step_problem(seat: int, frm: int, to: int, occupied: int, rules: MoveRules = DEFAULT_RULES) -> Said | None:
    """Returns why a step from `frm` to the adjacent `to` breaks a rule, or None (§4.1, §4.5, §4.6)."""
    return _land_problem(to, occupied & ~BIT[frm], rules, seat, frm, final=True)


def _land_problem(b: int, occ: int, rules: MoveRules, seat: int, frm: int, *, final: bool) -> Said | None:
    """Returns why landing on `b` breaks the side-triangle or goal-lock options, or None."""
    if occ & BIT[b]:
        return Said(f"落在有子的 {b} 号孔", f"lands on the occupied hole {b}")
    if rules.land_forbidden & BIT[b]:
        return Said("进入侧角", "enters a side triangle")
    if final and rules.end_forbidden & BIT[b]:
        return Said("停在侧角", "ends in a side triangle")
    if final and rules.lock != "off" and TARGET[seat] & BIT[frm] and not TARGET[seat] & BIT[b]:
        return Said("把棋子移出目标营", "takes a piece out of its target camp")
    return None


def classify(seat: int, frm: int, to: int, occupied: int, profile: CheckersProfile, path: tuple[int, ...] | None = None) -> str:
    """Returns the §4.7 code of a move the profile rejects: the option whose relaxation first makes
    it legal, by its witness path when the log gives one, else by its endpoint; `E_UNREACHABLE`
    when no profile accepts it.

    The options are relaxed one after the other, restrictions of plain moves first (side
    triangles, goal lock), long hops last: a plain-hop move into a forbidden triangle is a side
    triangle breach even where a long hop would also reach its endpoint."""
    for code, rules in _relaxations(MoveRules.of(profile)):
        if path is None and is_reachable(seat, frm, to, occupied, rules):
            return code
        if path is not None and check_path(seat, path, occupied, rules).problem is None:
            return code
    return "E_UNREACHABLE"


def _relaxations(base: MoveRules) -> list[tuple[str, MoveRules]]:
    """Returns the profile's rules relaxed cumulatively, one restricting option at a time, each
    with the code of the option it lifts."""
    out: list[tuple[str, MoveRules]] = []
    if base.land_forbidden or base.end_forbidden:
        base = base._replace(land_forbidden=0, end_forbidden=0)
        out.append(("E_SIDE_TRIANGLE", base))
    if base.lock != "off":
        base = base._replace(lock="off")
        out.append(("E_GOAL_LOCK", base))
    if not base.long_hops:
        out.append(("E_LONG_HOP_ONLY", base._replace(long_hops=True)))
    return out


def can_arrive_within(seat: int, own: int, other: int, turns: int, rules: MoveRules = DEFAULT_RULES) -> int:
    """Returns the fewest own moves (1..turns) that complete the seat's target camp with the
    opponent's pieces fixed (the equaliser search of §5.2: every sequence up to `turns`, moves of
    pieces already in the camp included), or 0 when none does."""
    target = TARGET[seat]
    frontier = {own}
    for n in range(1, turns + 1):
        last = n == turns
        following: set[int] = set()
        for pieces in frontier:
            occ = pieces | other
            # Only a piece from outside can complete the camp; the others make room for it first.
            for frm in ids(pieces & ~target if last else pieces):
                for to in reach(seat, frm, occ, rules).endpoints():
                    after = pieces ^ BIT[frm] ^ BIT[to]
                    if after == target:
                        return n
                    following.add(after)
        frontier = following
    return 0


def can_retrace(frm: int, to: int, before: int, after: int, long_hops: bool, path: tuple[int, ...] | None = None) -> bool:
    """Tells whether a hop chain from `frm` to `to` made in the occupancy `before` can be taken
    back along the same path in `after` (原路退回, 第四条): the path given, else some path that is
    legal both ways. Both occupancies leave out the moving piece."""
    if path is not None:
        return all(_hop_both_ways(a, b, before, after, long_hops) for a, b in zip(path, path[1:]))
    seen, stack = BIT[frm], [frm]
    while stack:
        a = stack.pop()
        for _, _, b in LONG_HOPS[a]:
            if not seen & BIT[b] and _hop_both_ways(a, b, before, after, long_hops):
                if b == to:
                    return True
                seen |= BIT[b]
                stack.append(b)
    return False


def _hop_both_ways(a: int, b: int, before: int, after: int, long_hops: bool) -> bool:
    """Tells whether a→b is a hop in `before` and b→a the same hop back in `after`."""
    geometry = HOP_GEOMETRY.get((a, b))
    if geometry is None or not (geometry[2] or long_hops):
        return False
    pivot, clear, _ = geometry
    back_clear = HOP_GEOMETRY[(b, a)][1]
    return bool(before & pivot and after & pivot) and not before & clear and not after & back_clear


def is_stuck(seat: int, own: int, occupied: int, home: int, rules: MoveRules = DEFAULT_RULES) -> bool:
    """Tells whether no move of `seat` adds a piece to its target camp or takes one out of its
    home camp (the `stuck` test of the wall check, §10)."""
    target = TARGET[seat]
    for frm in ids(own):
        gains = not target & BIT[frm]
        leaves = bool(home & BIT[frm])
        for to in reach(seat, frm, occupied, rules).endpoints():
            if (gains and target & BIT[to]) or (leaves and not home & BIT[to]):
                return False
    return True
