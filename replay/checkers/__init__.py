"""传统1v1跳棋 (two-player Chinese checkers) replay engine: `ENGINE` follows `replay.protocol.GameEngine`."""

from replay.checkers.engine import ENGINE, PASS, CheckersEngine
from replay.checkers.state import CheckersState

__all__ = ["ENGINE", "PASS", "CheckersEngine", "CheckersState"]
