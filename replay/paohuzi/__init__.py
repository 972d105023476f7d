"""竞技跑胡子 (Paohuzi) engine: the rules of `shared/rules/paohuzi.md`, replay, bot, pictures.

Public entry points:
- `ENGINE`: the `GameEngine` (replay, legal actions, bot_game, render_svg/render_text).
- `play_board(start, deck, rng, salt=None)`: one table's deal of a duplicate board (deck order given).
- `check_board_deals(tables)`: findings for tables of one board whose deals differ (第五条).
- `hu_report(hand, melds, win, source, profile, …)`: the `matchledger hu` report of one hand;
  `game_hu_report(state, seat, …)`: the same for a seat of a recorded deal at one step.
- `PROFILES`, `profile_named(name)`: the named regional rule profiles; `commitment(deck, salt)`.
"""

from replay import _compiled  # noqa: F401  (first: picks the compiled build or the sources)
from replay.paohuzi.bot import bot_game, play_board
from replay.paohuzi.deals import check_board_deals, commitment
from replay.paohuzi.engine import ENGINE, PaohuziEngine
from replay.paohuzi.profiles import DEFAULT, PROFILES, profile_named
from replay.paohuzi.report import game_hu_report, hu_report, parse_melds

__all__ = [
    "DEFAULT", "ENGINE", "PROFILES", "PaohuziEngine", "bot_game", "check_board_deals", "commitment",
    "game_hu_report", "hu_report", "parse_melds", "play_board", "profile_named",
]
