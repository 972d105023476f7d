"""竞技四国军棋 (Siguo Junqi): the engine of `shared/rules/junqi.md`; `ENGINE` satisfies `GameEngine`."""

from replay import _compiled  # noqa: F401  (first: picks the compiled build or the sources)
from replay.junqi.engine import ENGINE, JunqiEngine
from replay.junqi.perft import PositionError, format_position, load_position
from replay.junqi.summary import game_summary

__all__ = ["ENGINE", "JunqiEngine", "PositionError", "format_position", "game_summary", "load_position"]
