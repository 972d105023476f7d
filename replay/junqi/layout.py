"""布阵 validation (junqi.md §5, 第六条, 第四条 十): the checks L01–L08 and placing a layout."""

from __future__ import annotations

from msgspec.structs import replace

from replay.junqi.board import IS_CAMP, NAMES, owner_of, row_col
from replay.junqi.pieces import BOMB, COUNTS, FLAG, KIND_NAMES, MINE, cell
from replay.junqi.state import JunqiState, Layout, partner

ARTICLES = {
    "L01": "第四条 二", "L02": "第六条", "L03": "第六条", "L04": "第六条", "L05": "第六条",
    "L06": "第六条", "L07": "第六条", "L08": "第四条 十",
}
ALLIED_COLOURS = ({"红", "蓝"}, {"绿", "黑"})


def layout_problems(state: JunqiState, layout: Layout) -> list[tuple[str, str]]:
    """Returns every broken layout rule as (code, message), each code once, in code order."""
    seat, placements = layout.seat, layout.placements
    problems: dict[str, str] = {}  # the first message of each code
    counts = [0] * len(COUNTS)
    for _, kind in placements:
        counts[kind] += 1
    if len(placements) != 25 or any(counts[k] != n for k, n in enumerate(COUNTS)):
        wrong = [f"{KIND_NAMES[k]} {counts[k]}/{n}" for k, n in enumerate(COUNTS) if counts[k] != n]
        problems.setdefault("L01", f"布阵有 {len(placements)} 枚棋子，应为 25 枚（{'，'.join(wrong) or '数目不符'}） "
                                   f"{len(placements)} pieces, expected 25 ({', '.join(wrong) or 'counts differ'})")
    for point, kind in placements:
        name, piece = NAMES[point], KIND_NAMES[kind]
        if owner_of(point) != seat:
            problems.setdefault("L02", f"{piece}在 {name}，不在座位{seat}的阵地内 {piece} on {name}, outside seat {seat}'s arm")
            continue
        row = row_col(point)[0]
        if IS_CAMP[point]:
            problems.setdefault("L03", f"{piece}摆在行营 {name} {piece} on the 行营 {name}")
        if kind == FLAG and row_col(point) not in ((6, 2), (6, 4)):
            problems.setdefault("L05", f"军旗在 {name}，不在大本营 军旗 on {name}, not in a 大本营")
        if kind == MINE and row < 5:
            problems.setdefault("L06", f"地雷在 {name}，不在后两线 地雷 on {name}, outside the last two rows")
        if kind == BOMB and row == 1:
            problems.setdefault("L07", f"炸弹在 {name}，位于第一线 炸弹 on {name}, in the first row")
    seen: set[int] = set()
    doubled: set[int] = set()
    for point, _ in placements:
        if point in seen:
            doubled.add(point)
        seen.add(point)
    if doubled:
        points = sorted([NAMES[p] for p in doubled])
        problems.setdefault("L04", f"同一位置摆了两枚棋子：{'、'.join(points)} two pieces on {', '.join(points)}")
    if layout.colour is not None:
        clash = _colour_clash(state, seat, layout.colour)
        if clash:
            problems.setdefault("L08", clash)
    return sorted(problems.items())


def _colour_clash(state: JunqiState, seat: int, colour: str) -> str | None:
    """Returns why a seat's colour breaks 红+蓝 / 绿+黑 alliances, or None when it fits."""
    for other, known in enumerate(state.colours):
        if other != seat and known == colour:
            return f"座位{seat}的颜色{colour}已是座位{other}的颜色 colour {colour} of seat {seat} is already seat {other}'s"
    ally = state.colours[partner(seat)]
    if ally is not None and {colour, ally} not in ALLIED_COLOURS:
        return (f"座位{seat}为{colour}色而盟友为{ally}色：联盟须为红+蓝、绿+黑 "
                f"seat {seat} is {colour} but its partner is {ally}: 红+蓝 and 绿+黑 are the alliances")
    return None


def place(state: JunqiState, layout: Layout) -> JunqiState:
    """Puts a layout's pieces on the board (the first piece wins a doubled point; pieces outside the
    seat's arm are left off) and records the seat as laid out."""
    cells = list(state.board)
    for point, kind in layout.placements:
        if owner_of(point) == layout.seat and cells[point] == 0:
            cells[point] = cell(layout.seat, kind)
    laid = tuple(done or s == layout.seat for s, done in enumerate(state.laid))
    colours = tuple(layout.colour if s == layout.seat else c for s, c in enumerate(state.colours))
    return replace(state, board=tuple(cells), laid=laid, colours=colours)
