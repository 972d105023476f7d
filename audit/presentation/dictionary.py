"""The data dictionary: what every table, view and column `query` reads means. One source for
`query --describe`, the Parquet export's `schema.json` and README's table of the projection
(`python -m audit.presentation.dictionary` prints that table; a test holds README to it).

A note on two names: `game` is the game *type* (checkers, junqi, paohuzi) wherever it appears;
`stream` is the id of one game (or tournament): the stream its events are recorded in.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

COMMON = {
    "entry": "log entry (0-based index in the ledger) the row rests on",
    "stream": "id of the game (or tournament) stream the events are recorded in, e.g. junqi-cup-1/r1/t2/g1",
    "seq": "event's sequence number within its stream (0-based, dense)",
    "ts": "competition server's time of the event, ms since the epoch, UTC",
    "kind": "event kind, e.g. junqi.moved, game.ended",
    "seat": "seat number, 0-based in turn order (tournament.md §1a)",
    "game": "game type: checkers, junqi or paohuzi (the game's id is `stream`)",
    "tournament": "tournament stream id (NULL for a game outside any tournament)",
    "round": "tournament round, from 1",
    "table_no": "table number within the round, from 1",
    "game_no": "game number at the table within the round (board or match game), from 1",
    "board": "duplicate board id: the deal (Paohuzi) or game number (Junqi) every table of the round plays",
    "player": "player id as registered",
    "points": "game points of the seat",
    "unverified": "the engine derived no result (or marked it UNVERIFIED), so the declared one stands in",
    "termination": "how the game ended (derived by the engine), e.g. FLAG_CAPTURED, HU, DRAW_AGREED, UNVERIFIED",
    "winners": "winning seats (derived); empty for a draw",
    "action": "the action the engine read from the event (move, discard, chi …); NULL for events that are not actions",
    "facts": "JSON of every fact the engine derived at this step (contact, step and quiet counters, turn, 胡息 …)",
    "contact": "Junqi: the move attacked a piece (a 接触)",
    "step": "Junqi: plies since the game began (the step-limit counter)",
    "quiet": "Junqi: plies since the last capture (the quiet-move counter)",
    "turn": "seat to act after the step",
    "time_used": "ms the acting seat used on this step, by the engine's clock",
    "ms": "claimed move time in ms",
    "profile": "the game's rule profile in force, as JSON",
    "rank": "rank (equal values share it)",
    "movement_rank": "position in the movement order: rank with unresolved ties broken by player number",
    "unresolved": "tied on every tie-break (加赛 decides)",
    "games": "games played",
    "moves": "actions taken",
    "r": "score rate r = MP / top × 100 (得分率)",
}
"""Columns that mean the same in every table that has them."""


@dataclass(frozen=True)
class Relation:
    """A table, view or table macro of the projection: what one row is, and its own columns' meanings."""

    name: str
    kind: str  # table (built from the log), derived (built at load), view, macro
    row: str
    columns: dict[str, str]


RELATIONS = [
    Relation("events", "table", "log entry", {
        "body": "the event exactly as stored (JSON)"}),
    Relation("steps", "table", "event of a game as the engine replayed it", {
        "out": "pieces out of play after the step (Junqi)"}),
    Relation("games", "table", "game", {
        "first": "seat that moved first", "seats": "seats at the table",
        "started_ts": "ts of game.started", "ended_ts": "ts of the game's last event",
        "termination": "how the game ended after its rulings (the engine's result of play, then each result-changing ruling)",
        "winners": "winning seats after the game's rulings; empty for a draw",
        "derived_termination": "how the game ended as the engine derived it from play, before any ruling",
        "derived_winners": "winning seats as the engine derived them from play",
        "ruled_by": "seq of the last ruling that changed the result (NULL when none did)"}),
    Relation("seats", "table", "seat of a game", {
        "points": "game points of the seat after the game's rulings (NULL when there is no result)",
        "derived_points": "game points the engine derived for the seat from play, before any ruling"}),
    Relation("arbiters", "table", "arbiter.registered: a key made known to the ledger", {
        "key_name": "the key's name (a C2SP verifier name)", "role": "referee, chief_referee or committee",
        "name": "the arbiter's name", "problem": "why the registration cannot be used (NULL when it can)"}),
    Relation("appeals", "table", "appeal.filed (申诉, Junqi 第十八条)", {
        "game": "stream of the game appealed", "ruling_seq": "seq of the ruling appealed, when one is named",
        "grounds": "the appeal's grounds", "deadline_ts": "when the committee's decision is due (第十九条 1)"}),
    Relation("decisions", "table", "appeal.decided: the committee's decision (第十九条)", {
        "appeal_seq": "seq of the appeal decided", "decision": "upheld, rejected or void_late",
        "committee": "committee members named", "members": "number of members", "for_decision": "votes for the decision",
        "votes": "each member's vote", "text": "the decision's text", "arbiter": "key name that signed it",
        "signature": "valid, unsigned, unknown_signer, wrong_role or bad_signature"}),
    Relation("rulings", "table", "game.ruling: a referee's ruling (第十四条)", {
        "ruling": "kind: result_override, authorised_skip, penalty, forfeit, withdrawal, void_game, replay_from, score_correction",
        "explicit_kind": "the event named its kind (false: a ruling recorded before kinds existed)",
        "corrects": "seq of the event the ruling rules on", "appeal_stream": "stream of the appeal decision it carries out",
        "appeal_seq": "seq of that decision", "from_round": "withdrawal: the first round it forfeits",
        "termination": "the result it sets", "points": "the points it sets or adds", "text": "the ruling's text",
        "arbiter": "key name that signed it", "signature": "valid, unsigned, unknown_signer, wrong_role or bad_signature"}),
    Relation("findings", "table", "finding of the engines (and of the projection: streams that open nothing)", {
        "code": "stable finding code, e.g. junqi.M03", "article": "article of the rule book it cites",
        "severity": "error or warning", "message": "what is wrong, where and why",
        "source": "who found it: replay or projection", "check_name": "certification check it counts under"}),
    Relation("seatings", "table", "seat of a round's recorded seating", {
        "group_no": "movement group of the table (NULL when the tournament has none)"}),
    Relation("players", "table", "player registration", {"name": "player's name"}),
    Relation("tournaments", "table", "tournament", {
        "name": "tournament's name", "format": "duplicate or swiss", "stage": "stage of the event (e.g. final)",
        "profile": "the game's rule profile in force, as JSON", "rules": "tournament rules (tie-break settings …), as JSON"}),
    Relation("claims", "derived", "game: the software's last game.ended claim", {
        "termination": "claimed termination", "winners": "claimed winning seats", "points": "claimed points per seat"}),
    Relation("timings", "derived", "game.move_time claim", {
        "move_seq": "seq of the move the time was used for", "gap_ms": "timestamp gap of that move: what the claim should equal"}),
    Relation("competition_clock", "derived", "the competition: the time of its latest event", {
        "now_ts": "ts of the latest event not of the log's own log.* streams: the time `game_status` judges at"}),
    Relation("game_status", "derived", "game: what its result is worth as of the log's last timestamp", {
        "termination": "how the game ended after its rulings", "ruled_by": "seq of the last ruling that changed the result",
        "end_ts": "ts of the game's end", "window_end_ts": "when the appeal window closes (24 h online, 3 h at a venue)",
        "now_ts": "the log's last timestamp", "status": "final, provisional (appeal window open), under_appeal, unresolved or void"}),
    Relation("results", "derived", "seat of a game with the points the standings count", {
        "points": "points the standings count: after the rulings, or claimed where the engine derived none",
        "source": "where the points come from: derived, ruling, claimed, void or none",
        "status": "the game's status (see `game_status`)", "ruled_by": "seq of the last ruling that changed the result"}),
    Relation("seat_times", "derived", "seat of a game: its claimed move time", {"ms": "sum of the seat's game.move_time claims"}),
    Relation("moves", "view", "engine-accepted or flagged action", {"pieces_out": "pieces out of play after the action (Junqi)"}),
    Relation("board_mp", "view", "participant × board of a duplicate tournament", {
        "field": "comparison field: the movement group under mp_field = group, else NULL (the whole round)",
        "n": "participants compared on the board at this seat position", "mp": "match points: 2 per worse score, 1 per equal",
        "top": "highest MP possible, 2(N−1)", "points": "the participant's game points on the board"}),
    Relation("game_lengths", "view", "game: its length", {
        "moves": "actions the seats took", "minutes": "minutes from game.started to the last event",
        "started_at": "game.started as a timestamp (UTC)", "ended_at": "the last event as a timestamp (UTC)"}),
    Relation("player_results", "view", "player × game, every game type", {
        "result": "win, loss or draw as the engine derived it (Junqi's alliance wins together); NULL when it derived none",
        "points": "points the standings count (see `results`)", "moves": "the player's own actions",
        "own_ms": "the player's own claimed move time in ms", "game_moves": "actions of the whole game",
        "game_minutes": "minutes the game lasted"}),
    Relation("standings", "macro", "player of a duplicate tournament through round n: `standings(t, n)`", {
        "r_mean": "R: mean board score rate", "r_shown": "R as ranked, to one decimal", "boards": "boards with a rate",
        "opp_r": "tie-break 1: opponents' average R", "beaten_r": "tie-break 2: beaten opponents' average R",
        "move_ms": "tie-break 3: total own move time, ms (less ranks higher)",
        "trimmed_ms": "tie-break 4: own move time per game without the longest and shortest game, ms",
        "trimmed_basis": "which games tie-break 4 counts", "unverified": "games whose declared result stands in",
        "void_games": "games voided by a ruling (left out of the comparison)",
        "status": "final when every game is final, else the least final of its games"}),
    Relation("swiss_matches", "macro", "checkers Swiss player × round through round n: `swiss_matches(t, n)`", {
        "opponent": "the opponent (NULL for a bye)", "game_points": "game points of the match",
        "won": "games won (a forfeit win: one)", "played": "games counted: played, or one for a forfeit",
        "unverified": "games whose declared result stands in",
        "mp": "大分: match points of the round", "kind": "match, bye, forfeit after a withdrawal (第十二条), or void (every game voided)",
        "met": "whether the opponent counts as met (Buchholz, direct encounter, no second pairing); a void match per void_game"}),
    Relation("swiss", "macro", "player of a checkers Swiss tournament through round n: `swiss(t, n)`", {
        "big": "大分: match points", "bh": "小分: Buchholz (opponents' final 大分)", "ps": "累进分: sum of running totals",
        "direct_encounter": "points against the tied group when all of it has met",
        "wins": "games won, forfeit wins included (§12.3)", "win_rate": "games won / games counted (a forfeit is one game)",
        "bh_prev": "Buchholz after the last round played − 1",
        "de_or_wins": "the fourth tie-break as applied: direct encounter, else games won",
        "unverified": "games whose declared result stands in",
        "forfeits": "matches forfeited after a withdrawal (第十二条)",
        "status": "final when every game is final, else the least final of its games"}),
]
BY_NAME = {r.name: r for r in RELATIONS}


def meaning(relation: str, column: str) -> str | None:
    """Returns what a column of a relation means, or None when the dictionary lacks it."""
    own = BY_NAME[relation].columns if relation in BY_NAME else {}
    return own.get(column, COMMON.get(column))


def describe_columns(relation: str | None = None) -> list[tuple[str, str, str, str]]:
    """Returns (relation, column, type, meaning) for every column of one relation, or of all of
    them, typed as DuckDB reads them from an empty projection.

    :raises ValueError: when the relation does not exist (a name the user gave: exit 2).
    """
    from audit.query.db import AuditDB, AuditError
    from audit.query.projection import SCHEMAS

    db = AuditDB({name: schema.empty_table() for name, schema in SCHEMAS.items()})
    names = [relation] if relation is not None else [r.name for r in RELATIONS]
    try:
        return [(name, column, kind, meaning(name, column) or "") for name in names for column, kind in db.describe(name)]
    except AuditError as exc:
        raise ValueError(f"{exc} (query --list lists them)") from None


def readme_table() -> str:
    """Returns README's table of the projection: one line per relation, what a row is, and its columns."""
    from audit.presentation.rows import Rows, markdown

    columns: dict[str, list[str]] = {}
    for relation, column, _, _ in describe_columns():
        columns.setdefault(relation, []).append(column)
    return markdown(Rows(["table / view", "kind", "one row per", "columns"],
                         [[f"`{r.name}(t, n)`" if r.kind == "macro" else f"`{r.name}`", r.kind, r.row, ", ".join(columns[r.name])]
                          for r in RELATIONS]))


if __name__ == "__main__":
    sys.stdout.write(readme_table())
