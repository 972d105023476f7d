"""Differential test of the checkers move generator against an independent one written here from
the text of checkers.md §1 and §4 (cube coordinates, no shared tables): steps to adjacent empty
holes (§4.1), chains of hops over one piece (§4.2, §4.3), and the profile's long hops (§4.4),
side triangles (§4.5) and goal lock (§4.6), compared on seeded random playouts under random
profiles, and the engine's check of logged moves (with and without paths) against the same
generator. MATCHLEDGER_DIFF_GAMES sets the number of games (default 6); a disagreement prints the
profile and the move list that reproduces it."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator

from replay.checkers.board import BIT
from replay.checkers.check import check_move
from replay.checkers.moves import MoveRules, all_moves
from replay.checkers.state import setup
from schemas.checkers import CheckersProfile

GAMES = int(os.environ.get("MATCHLEDGER_DIFF_GAMES", "6"))
PLIES = 160
Cell = tuple[int, int]
DIRECTIONS: tuple[Cell, ...] = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))


def _on_board(c: Cell) -> bool:
    """§1.1: a hole is in the union of two triangles, min(q, r, s) ≥ −4 or max(q, r, s) ≤ 4."""
    q, r = c
    s = -q - r
    return min(q, r, s) >= -4 or max(q, r, s) <= 4


HOLES: list[Cell] = sorted((c for c in ((q, r) for q in range(-8, 9) for r in range(-8, 9)) if _on_board(c)),
                           key=lambda c: (c[1], c[0]))
ID: dict[Cell, int] = {c: i for i, c in enumerate(HOLES)}


def _zone(c: Cell) -> str:
    """§1.3: the zone predicate, first match wins."""
    q, r = c
    s = -q - r
    for name, test in (("N", r <= -5), ("NE", q >= 5), ("SE", s <= -5), ("S", r >= 5), ("SW", q <= -5), ("NW", s >= 5)):
        if test:
            return name
    return "C"


SIDE_ZONES = {"NE", "SE", "SW", "NW"}
HOME_ZONE = ("N", "S")
TARGET_ZONE = ("S", "N")


def _add(c: Cell, d: Cell, k: int = 1) -> Cell:
    return c[0] + k * d[0], c[1] + k * d[1]


def _hops(x: Cell, occupied: set[Cell], long_hops: bool) -> Iterator[Cell]:
    """§4.2 / §4.4: landings of one hop from x — over one piece to the empty hole beyond; with long
    hops, k empty holes, the pivot, then k + 1 empty holes, landing on the last."""
    for d in DIRECTIONS:
        for k in range(0, 8 if long_hops else 1):
            before = [_add(x, d, j) for j in range(1, k + 1)]
            pivot = _add(x, d, k + 1)
            after = [_add(x, d, j) for j in range(k + 2, 2 * k + 3)]
            if not all(_on_board(c) for c in [*before, pivot, *after]):
                break
            if any(c in occupied for c in before):
                break
            if pivot in occupied and not any(c in occupied for c in after):
                yield after[-1]


def endpoints(seat: int, origin: Cell, occupied: set[Cell], profile: CheckersProfile) -> dict[Cell, list[Cell]]:
    """Returns every legal endpoint of the piece on `origin` with one path to it (§4.1–4.6)."""
    occ = occupied - {origin}
    target = TARGET_ZONE[seat]
    locked = profile.goal_lock != "off" and _zone(origin) == target

    def may_land(c: Cell) -> bool:
        return not (profile.side_triangles == "forbidden" and _zone(c) in SIDE_ZONES)

    def may_end(c: Cell) -> bool:
        in_side = _zone(c) in SIDE_ZONES and profile.side_triangles != "free"
        return c != origin and not in_side and not (locked and _zone(c) != target)

    found: dict[Cell, list[Cell]] = {}
    for d in DIRECTIONS:
        n = _add(origin, d)
        if _on_board(n) and n not in occ and may_land(n) and may_end(n):
            found[n] = [origin, n]
    # The origin counts as empty and may be landed on again mid-chain (§4.3); a hole is entered once.
    paths = {origin: [origin]}
    stack = [origin]
    while stack:
        x = stack.pop()
        inside = profile.goal_lock == "within_chain" and _zone(x) == target
        for land in _hops(x, occ, profile.hop_mode == "equidistant"):
            if land in paths or not may_land(land) or (inside and _zone(land) != target):
                continue
            paths[land] = [*paths[x], land]
            stack.append(land)
    found.update((c, p) for c, p in paths.items() if may_end(c))
    return found


def _random_profile(rng: random.Random) -> CheckersProfile:
    return CheckersProfile(hop_mode=rng.choice(["adjacent", "equidistant"]),
                           side_triangles=rng.choice(["free", "pass_through_only", "forbidden"]),
                           goal_lock=rng.choice(["off", "across_turns", "within_chain"]))


def _progress(seat: int, frm: Cell, to: Cell) -> int:
    """Returns how far a move carries a piece towards its target camp (north moves south)."""
    return (to[1] - frm[1]) if seat == 0 else (frm[1] - to[1])


def _compare(seat: int, pieces: list[set[Cell]], profile: CheckersProfile, moves: list[str]) -> dict[tuple[int, int], list[Cell]]:
    """Asserts both generators give the same moves for `seat`; returns ours with their paths."""
    occupied = pieces[0] | pieces[1]
    ours = {(ID[f], ID[t]): p for f in pieces[seat] for t, p in endpoints(seat, f, occupied, profile).items()}
    bits = [sum(BIT[ID[c]] for c in side) for side in pieces]
    theirs = set(all_moves(seat, bits[seat], bits[0] | bits[1], MoveRules.of(profile)))
    assert theirs == set(ours), (
        f"move generators disagree for seat {seat} under {profile.hop_mode}/{profile.side_triangles}/{profile.goal_lock}\n"
        f"  moves from the start (north first): {','.join(moves)}\n"
        f"  only the engine: {sorted(theirs - set(ours))}\n  only the rules text: {sorted(set(ours) - theirs)}")
    return ours


def _check_logged_moves(seat: int, pieces: list[set[Cell]], profile: CheckersProfile, frm: int,
                        ours: dict[tuple[int, int], list[Cell]], rng: random.Random, moves: list[str]) -> None:
    """Asserts the engine's check of a logged move agrees: every endpoint of the piece on `frm`
    is legal with the path the rules-text generator found and by its ends alone, and a sample of
    other empty holes is illegal."""
    state = setup(profile, [ID[c] for c in pieces[0]], [ID[c] for c in pieces[1]], seat)
    occupied = {ID[c] for c in pieces[0] | pieces[1]}
    empty = [i for i in range(len(HOLES)) if i not in occupied]
    legal = {t for f, t in ours if f == frm}
    where = f"seat {seat} under {profile.hop_mode}/{profile.side_triangles}/{profile.goal_lock} after {','.join(moves)}"
    for to in sorted(legal):
        path = tuple(ID[c] for c in ours[(frm, to)])
        for witness in (path if len(path) > 2 else None, None):
            verdict = check_move(state, seat, frm, to, witness)
            assert verdict.code is None, f"{frm}>{to} (path {witness}) of {where}: {verdict.code} {verdict.why}"
    for to in rng.sample(empty, min(8, len(empty))):
        if to not in legal:
            assert check_move(state, seat, frm, to, None).code is not None, f"{frm}>{to} of {where} was accepted"


def test_move_generation_agrees_with_the_rules_text_on_random_playouts() -> None:
    """§4.1–4.6: on every position of seeded random playouts, under random move options, the
    engine's (from, to) moves equal those of the generator written from the rules text, and the
    engine accepts each played move with the path that generator gives."""
    seed = int(os.environ.get("MATCHLEDGER_DIFF_SEED", "20261201"))
    print(f"checkers differential seed={seed} games={GAMES}")
    rng = random.Random(seed)
    for _ in range(GAMES):
        profile = _random_profile(rng)
        pieces = [{c for c in HOLES if _zone(c) == HOME_ZONE[seat]} for seat in (0, 1)]
        moves: list[str] = []
        for ply in range(PLIES):
            seat = ply % 2
            ours = _compare(seat, pieces, profile, moves)
            if not ours:
                moves.append("pass")
                continue
            options = sorted(ours)
            if rng.random() < 0.6:
                best = max(_progress(seat, HOLES[f], HOLES[t]) for f, t in options)
                options = [m for m in options if _progress(seat, HOLES[m[0]], HOLES[m[1]]) == best]
            frm, to = rng.choice(options)
            _check_logged_moves(seat, pieces, profile, frm, ours, rng, moves)
            pieces[seat] = (pieces[seat] - {HOLES[frm]}) | {HOLES[to]}
            moves.append(f"{frm}>{to}")
