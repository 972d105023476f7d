"""竞技四国军棋 (Siguo Junqi): the engine of `shared/rules/junqi.md`; `ENGINE` satisfies `GameEngine`."""

from replay.junqi.engine import ENGINE, JunqiEngine

__all__ = ["ENGINE", "JunqiEngine"]
