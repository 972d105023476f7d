"""竞技跑胡子 (Paohuzi) engine: rules of `shared/rules/paohuzi.md`, replay, bot, pictures.

Public functions for the tournament layer and the CLI: `ENGINE`, `play_board`, `check_board_deals`,
`hu_report`, `profile_named`, `PROFILES`, `commitment`.
"""

from replay.paohuzi.bot import bot_game, play_board
from replay.paohuzi.deals import check_board_deals, commitment
from replay.paohuzi.engine import ENGINE, PaohuziEngine
from replay.paohuzi.profiles import DEFAULT, PROFILES, profile_named
from replay.paohuzi.report import hu_report, parse_melds

__all__ = [
    "DEFAULT", "ENGINE", "PROFILES", "PaohuziEngine", "bot_game", "check_board_deals", "commitment",
    "hu_report", "parse_melds", "play_board", "profile_named",
]
