"""The tournament page: the standings with every column and a legend of the columns in both
languages, the crosstable of who scored what against whom, and every game linked to its
arbitration report (written beside the page)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from audit.page import e, heading, page, table
from audit.render import cell_text
from audit.report import write_report
from audit.session import Session, open_session
from audit.standings import Standings, standings
from ledger import check_output, write_output

COLUMNS: dict[str, tuple[str, str]] = {
    "rank": ("名次", "rank"),
    "player": ("选手", "player"),
    "r_shown": ("得分率 R", "mean board score rate r (MP / top × 100), shown to one decimal (tournament.md §2)"),
    "boards": ("副数", "boards with a rate"),
    "opp_r": ("对手平均得分率", "tie-break 1: opponents' average R"),
    "beaten_r": ("胜对手平均得分率", "tie-break 2: beaten opponents' average R"),
    "move_ms": ("总用时", "tie-break 3: total own move time, ms (less ranks higher)"),
    "trimmed_ms": ("去头尾平均用时", "tie-break 4: move time per game without the longest and shortest game, ms"),
    "big": ("大分", "total match points"),
    "bh": ("小分 BH", "Buchholz: sum of the opponents' 大分"),
    "ps": ("累进分 PS", "progressive score: sum of the running totals"),
    "direct_encounter": ("直胜 DE", "direct encounter among the tied players"),
    "wins": ("胜局", "games won"),
    "games": ("局数", "games played"),
    "win_rate": ("胜率", "win rate"),
    "bh_prev": ("前轮小分", "Buchholz after earlier rounds"),
    "unresolved": ("未分胜负", "a tie the chain leaves to a play-off (加赛)"),
    "unverified": ("未核实", "games that stand on a declared result the engine could not verify"),
}
"""The standings' columns in Chinese and English; a column not listed still shows, under its own name."""


@dataclass
class TournamentPage:
    """What the tournament page shows, and the game reports written beside it."""

    tournament: str
    standings: Standings
    games: list[dict[str, Any]]
    crosstable: list[dict[str, Any]]
    reports: dict[str, Path] = field(default_factory=dict)


def game_report_path(out: Path, stream: str) -> Path:
    """Returns where a game's report goes beside the tournament page `out`."""
    return out.with_name(f"{out.stem}-{re.sub(r'[^A-Za-z0-9._-]', '_', stream)}.html")


def write_tournament_report(root: Path, tournament: str, out: Path, force: bool = False,
                            step: Callable[[str, int], Callable[[int], None]] | None = None) -> TournamentPage:
    """Writes the tournament page and each game's arbitration report beside it; returns what it shows.
    `step(label, total)` starts a step of the work and returns what advances it: the replay of the
    ledger (its total told by the projection), then one report per game and the page.

    :raises ValueError: when the ledger holds no such tournament.
    :raises OutputRefused: when a file to write lies in a ledger, is a link, or exists without `force`.
    """
    check_output(out, force)
    result = load_tournament(open_session(root, step("replaying games", 0) if step else None, kept=True), tournament)
    for row in result.games:
        check_output(game_report_path(out, row["stream"]), force)
    advance = step("writing the reports", len(result.games) + 1) if step else None
    for row in result.games:
        path = game_report_path(out, row["stream"])
        write_report(root, row["stream"], path, force)
        result.reports[row["stream"]] = path
        if advance:
            advance(1)
    write_output(out, render_tournament(result).encode(), force)
    if advance:
        advance(1)
    return result


def load_tournament(session: Session, tournament: str) -> TournamentPage:
    """Returns the standings, the games and the crosstable of a tournament.

    :raises ValueError: when the ledger holds no such tournament.
    """
    ranked = standings(session, tournament)
    games = session.db.run("tournament_games", tournament=tournament)
    return TournamentPage(tournament, ranked, games, session.db.run("crosstable", tournament=tournament))


def render_tournament(result: TournamentPage) -> str:
    """Returns the tournament page as one self-contained HTML page."""
    s = result.standings
    body = [heading("赛事成绩", "Tournament results", "top", 1), f"<p><code>{e(s.tournament)}</code> · {e(s.game)} · {e(s.format)}</p>",
            heading("排名", "Standings", "standings"), _standings(s), heading("栏目说明", "What each column means", "columns"), _legend(s),
            heading("交叉表", "Crosstable: points scored against each opponent (games)", "crosstable"), _crosstable(result),
            heading(f"对局 ({len(result.games)})", "Games", "games"), _games(result)]
    return page(f"赛事成绩 {s.tournament}", "".join(body))


def _standings(s: Standings) -> str:
    header = [f"{e(COLUMNS.get(c, (c, c))[0])}<br><span lang='en'>{e(c)}</span>" for c in s.columns]
    return table(header, [[e(cell_text(r.get(c))) for c in s.columns] for r in s.rows], "standings")


def _legend(s: Standings) -> str:
    return table(["栏目 column", "中文", "English"], [[f"<code>{e(c)}</code>", e(COLUMNS.get(c, (c, ""))[0]), e(COLUMNS.get(c, ("", c))[1])]
                                                     for c in s.columns])


def _crosstable(result: TournamentPage) -> str:
    order = [r["player"] for r in result.standings.rows]
    cells = {(c["player"], c["opponent"]): c for c in result.crosstable}
    if not cells:
        return "<p>无 No games between ranked players.</p>"
    header = ["#", "选手 player", *(str(i + 1) for i in range(len(order)))]
    rows = []
    for i, player in enumerate(order):
        line = [str(i + 1), e(player)]
        for other in order:
            c = cells.get((player, other))
            line.append("■" if other == player else "" if c is None else f"{e(cell_text(c['points']))} ({c['games']})")
        rows.append(line)
    return table(header, rows, "crosstable")


def _games(result: TournamentPage) -> str:
    rows = []
    for g in result.games:
        path = result.reports.get(g["stream"])
        name = f"<a href='{e(path.name)}'>{e(g['stream'])}</a>" if path else e(g["stream"])
        seats = "<br>".join(f"{i}: {e(p)} — {e(cell_text(pts))}" for i, (p, pts) in enumerate(zip(g["players"], g["points"])))
        rows.append([name, str(g["round"] or ""), str(g["table_no"] or ""), str(g["game_no"] or ""), e(g["board"] or ""),
                     e(g["termination"] or "–"), seats, "unverified 未核实" if g["unverified"] else "", str(g["findings"])])
    header = ["对局 game", "轮 round", "桌 table", "局 game", "副 board", "结果 termination", "座位: 选手 — 得分 seat: player — points",
              "核实 verified", "问题 findings"]
    return table(header, rows, "games")
