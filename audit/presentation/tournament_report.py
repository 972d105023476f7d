"""The tournament page, after chess-results.com: "after round N of M" and the signed checkpoint it
was computed from, the standings with player names and every column in Chinese and English with
its meaning (audit/presentation/terms.py), the round-by-round crosstable (`standings --crosstable`), and every
game linked to its arbitration report, written beside the page and linking back."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.compute as pc

from audit.presentation.page import e, heading, page, table
from audit.presentation.render import clock, display_cell, is_duration
from audit.presentation.report import write_report
from audit.presentation.terms import COLUMNS, term, termination
from audit.query.session import Session, open_session
from audit.query.standings import Crosstable, Standings, crosstable, standings
from ledger import LogReader, check_output, load_verifier, newest_checkpoint, write_output
from ledger.outputs import stream_file_name
from schemas.common import TournamentOpened


@dataclass
class TournamentPage:
    """What the tournament page shows, and the game reports written beside it."""

    tournament: str
    standings: Standings
    games: list[dict[str, Any]]
    crosstable: Crosstable
    names: dict[str, str] = field(default_factory=dict)
    """Each player's registered name, by player id."""
    appeals: list[dict[str, Any]] = field(default_factory=list)
    """The tournament's appeals (`appeal_list`), shown in each game's report."""
    reports: dict[str, Path] = field(default_factory=dict)
    opened: TournamentOpened | None = None
    checkpoint: tuple[int, str] | None = None
    """The size and root (hex) of the newest signed checkpoint when the page was written."""
    last_ts: int | None = None
    """The server time of the last event the checkpoint covers (a note carries no time of its own)."""
    first: dict[str, int] = field(default_factory=dict)
    """The seat that moved first in each game whose report was written."""
    explained: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Each ranked player's games as `standings --explain` gives them (`player_games`: seat, result, points counted and whence)."""


def game_report_path(out: Path, stream: str) -> Path:
    """Returns where a game's report goes beside the tournament page `out`: named as every per-stream
    output is (`stream_file_name`), so no two streams share a file (`a/b` and `a_b`)."""
    return out.with_name(f"{out.stem}-{stream_file_name(stream, '.html')}")


def _link(path: Path) -> str:
    """Returns a report's file name as a relative URL (its `%XX` escapes escaped in turn)."""
    return e(urllib.parse.quote(path.name))


def write_tournament_report(root: Path, tournament: str, out: Path, force: bool = False,
                            step: Callable[[str, int], Callable[[int], None]] | None = None) -> TournamentPage:
    """Writes the tournament page and each game's arbitration report beside it; returns what it shows.
    `step(label, total)` starts a step of the work and returns what advances it: the replay of the
    ledger (its total told by the projection), then one report per game and the page.

    :raises ValueError: when the ledger holds no such tournament.
    :raises OutputRefused: when a file to write lies in a ledger, is a link, or exists without `force`.
    """
    check_output(out, force)
    session = open_session(root, step("replaying games", 0) if step else None, kept=True)
    result = load_tournament(session, tournament)
    result.opened = next((ev for ev in list(LogReader(root).events(tournament)) if isinstance(ev, TournamentOpened)), None)
    signed = newest_checkpoint(root, load_verifier(root))
    if signed is not None:
        result.checkpoint = (signed.size, signed.root.hex())
        result.last_ts = signed_time(session, signed.size)
    for row in result.games:
        check_output(game_report_path(out, row["stream"]), force)
    advance = step("writing the reports", len(result.games) + 1) if step else None
    for row in result.games:
        path = game_report_path(out, row["stream"])
        shown = write_report(root, row["stream"], path, force, appeals=result.appeals, back=out.name)
        result.reports[row["stream"]] = path
        result.first[row["stream"]] = shown.start.first
        if advance:
            advance(1)
    write_output(out, render_tournament(result).encode(), force)
    if advance:
        advance(1)
    return result


def signed_time(session: Session, size: int) -> int | None:
    """Returns the server time of the newest event among the first `size` entries of the log."""
    events = session.projection.tables()["events"]
    under = events.filter(pc.less(events["entry"], size))
    return int(pc.max(under["ts"]).as_py()) if under.num_rows else None


def load_tournament(session: Session, tournament: str) -> TournamentPage:
    """Returns the standings, the games and the crosstable of a tournament.

    :raises ValueError: when the ledger holds no such tournament.
    """
    ranked = standings(session, tournament)
    games = session.db.run("tournament_games", tournament=tournament)
    names = {r["player"]: r["name"] for r in session.projection.tables()["players"].to_pylist() if r["tournament"] == tournament and r["name"]}
    explained = {r["player"]: session.db.run("player_games", tournament=tournament, player=r["player"]) for r in ranked.rows}
    return TournamentPage(tournament, ranked, games, crosstable(session, tournament), names,
                          session.db.run("appeal_list", tournament=tournament), explained=explained)


FORMATS = {"swiss": "瑞士制 Swiss", "duplicate": "复式赛 duplicate"}


def render_tournament(result: TournamentPage) -> str:
    """Returns the tournament page as one self-contained HTML page."""
    s = result.standings
    body = [heading("赛事成绩", "Tournament results", "top", 1), _header(result),
            heading("排名", "Standings", "standings"), _standings(result), heading("栏目说明", "What each column means", "columns"),
            _legend(s), heading("交叉表", _crosstable_title(result.crosstable), "crosstable"), _crosstable(result),
            heading(f"对局 ({len(result.games)})", "Games", "games"), _games(result),
            heading("选手说明", "Per player: each game, the points counted and whence", "players"), _explanations(result)]
    return page(f"赛事成绩 {s.tournament}", "".join(body))


def _header(result: TournamentPage) -> str:
    """Returns what the page is: the tournament, its game and format, after which round, and the
    signed checkpoint the figures rest on."""
    s, opened = result.standings, result.opened
    played = max((g["round"] or 0 for g in result.games), default=0)
    total = opened.rounds if opened and opened.rounds else None
    of = f"第 {played} 轮后（共 {total} 轮） after round {played} of {total}" if total else f"第 {played} 轮后 after round {played}"
    name = f"{e(opened.name)} · " if opened and opened.name else ""
    signed = ("检查点 checkpoint：未签名 none signed" if result.checkpoint is None else
              f"依据已签名检查点 computed from the signed checkpoint：size {result.checkpoint[0]}，root <code>{result.checkpoint[1]}</code>")
    return (f"<p class='verdict'>{name}<code>{e(s.tournament)}</code> · {e(s.game)} · {e(FORMATS.get(s.format, s.format))} · {e(of)}</p>"
            f"<p>{signed}；其最后事件时间 the time of its last event {e(clock(result.last_ts))}</p>")


def _player(result: TournamentPage, player: str) -> str:
    name = result.names.get(player)
    return e(player) + (f" {e(name)}" if name else "")


def page_cell(value: Any, column: str) -> str:
    """Returns a standings value as the page shows it: durations m:ss, 是/否 yes/no, a status in words."""
    if isinstance(value, bool):
        return "是 yes" if value else "否 no"
    if column == "status" and isinstance(value, str):
        return term(value)
    if is_duration(column) and isinstance(value, float):
        value = round(value)  # a mean of milliseconds: a person reads it to the millisecond (JSON keeps it exact)
    return display_cell(value, column)


def _standings(result: TournamentPage) -> str:
    s = result.standings
    header = [f"{e(COLUMNS[c].zh) if c in COLUMNS else ''}<br><span lang='en'>{e(c)}</span>" for c in s.columns]
    rows = [[_player(result, r["player"]) if c == "player" else e(page_cell(r.get(c), c)) for c in s.columns] for r in s.rows]
    return table(header, rows, "standings")


def _legend(s: Standings) -> str:
    return table(["栏目 column", "中文", "含义 meaning"], [[f"<code>{e(c)}</code>", e(COLUMNS[c].zh if c in COLUMNS else ""),
                                                       e(COLUMNS[c].en if c in COLUMNS else c)] for c in s.columns], "columns")


def _crosstable_title(c: Crosstable) -> str:
    if c.format == "swiss":
        return "Crosstable: each round's opponent and match points (1 win, ½ draw, 0 loss; F forfeit)"
    return "Crosstable: each round's mean MP score rate r (%)"


def _crosstable(result: TournamentPage) -> str:
    """Returns the crosstable: a row per player in rank order, a column per round (the result, the
    seat played and whether it moved first), the total and status."""
    c = result.crosstable
    if not c.rows:
        return "<p>无 No games between ranked players.</p>"
    total = "大分 big" if c.format == "swiss" else "得分率 r"
    header = ["名次 rank", "选手 player", *(f"第{n}轮 r{n}" for n in c.rounds), total, "成绩状态 status"]
    seats: dict[tuple[str, int], list[str]] = {}
    met: dict[tuple[str, int], list[str]] = {}
    players = {g["stream"]: g["players"] for g in result.games}
    for player, games in result.explained.items():
        for g in games:
            first = " 先行 first" if result.first.get(g["stream"]) == g["seat"] else ""
            seats.setdefault((player, g["round"]), []).append(f"{g['seat']}{first}")
            against = met.setdefault((player, g["round"]), [])
            against.extend(o for o in _opponents(players.get(g["stream"], []), g["seat"]) if o not in against)

    def cell(row: dict[str, Any], n: int) -> str:
        where = ", ".join(seats.get((row["player"], n), ()))
        vs = "、".join(met.get((row["player"], n), ())) if c.format != "swiss" else ""  # a Swiss cell names its opponent already
        notes = (f"座位 seat {e(where)}" if where else "") + (f" · 对 vs {e(vs)}" if vs else "")
        return e(row["rounds"].get(n, "–")) + (f" <small>{notes}</small>" if notes else "")

    rows = [[e(display_cell(r["rank"])), _player(result, r["player"]), *(cell(r, n) for n in c.rounds),
             e(display_cell(r["total"])), e(term(r["status"]) if r["status"] else "–")] for r in c.rows]
    return table(header, rows, "crosstable")


def _opponents(players: list[str], seat: int) -> list[str]:
    """Returns who played against `seat` in a game: in 四国军棋 the two seats of the other alliance
    (seats 0 and 2 play with each other against 1 and 3), in the other games every other seat."""
    if len(players) == 4:
        return [players[(seat + 1) % 4], players[(seat + 3) % 4]]
    return [p for s, p in enumerate(players) if s != seat]


def _games(result: TournamentPage) -> str:
    rows = []
    for g in result.games:
        path = result.reports.get(g["stream"])
        name = f"<a href='{_link(path)}'>{e(g['stream'])}</a>" if path else e(g["stream"])
        seats = "<br>".join(f"{i}: {_player(result, p)} — {e(display_cell(pts))}" for i, (p, pts) in enumerate(zip(g["players"], g["points"])))
        rows.append([name, str(g["round"] or ""), str(g["table_no"] or ""), str(g["game_no"] or ""), e(g["board"] or ""),
                     e(termination(g["termination"])), seats, e(term("unverified") if g["unverified"] else SOURCES["derived"]), str(g["findings"])])
    header = ["对局 game", "轮 round", "桌 table", "局 game", "副 board", "结果 termination", "座位: 选手 — 得分 seat: player — points",
              "核实 verified", "问题 findings"]
    return table(header, rows, "games")


SOURCES = {"derived": "推导 derived", "ruling": "裁决 ruling", "claimed": "声称 claimed", "void": "无效 void", "none": "无 none"}
"""Where the points a standings row counts come from (see `results`)."""


def _explanations(result: TournamentPage) -> str:
    """Returns, per player in rank order, a folded table of their games (`standings --explain`): round,
    game (linked), seat, result, points of play, the ruling that changed them, points counted and
    whence, the game's status and the player's own move time."""
    header = ["轮 round", "对局 game", "座位 seat", "结果 result", "推导得分 derived", "裁决 ruling", "计入得分 counted", "来源 from",
              "状态 status", "用时 own time"]
    out = []
    for r in result.standings.rows:
        rows = []
        for g in result.explained.get(r["player"], []):
            path = result.reports.get(g["stream"])
            game = f"<a href='{_link(path)}'>{e(g['stream'])}</a>" if path else e(g["stream"])
            rows.append([e(display_cell(g["round"])), game, e(display_cell(g["seat"])), e(termination(g["termination"])),
                         e(display_cell(g["derived_points"])), e(g["ruling"] or "–"), e(display_cell(g["counted_points"])),
                         e(SOURCES.get(g["counted_from"], g["counted_from"] or "–")), e(term(g["status"]) if g["status"] else "–"),
                         e(display_cell(g["own_move_ms"], "own_move_ms"))])
        summary = f"{e(display_cell(r['rank']))}. {_player(result, r['player'])}"
        out.append(f"<details><summary>{summary}</summary>{table(header, rows, 'explain')}</details>")
    return "".join(out)
