"""Which optional accelerators this process runs, and why not where one does not: the C frame
scanner, the C JSON splitter and each game's mypyc build (setup.py builds them; without them the
pure-Python modules give the same results, slower). Shown by `matchledger --version` and `demo`."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Accelerator:
    """One optional accelerator: its module, what it speeds up, whether it runs, and why not."""

    name: str
    role: str
    in_use: bool
    why: str = ""

    def line(self) -> str:
        """Returns the accelerator as one line, zh-Hans first with English beside."""
        state = "使用中 in use" if self.in_use else f"未使用 not in use: {self.why}"
        return f"{self.name} ({self.role}): {state}"


def accelerators() -> list[Accelerator]:
    """Returns every optional accelerator of this installation and whether this process runs it."""
    from audit.query import jsonsplit
    from ledger import fastscan
    from replay import _compiled

    record = _compiled.build_record(_compiled.ROOT) or {}
    built_c: dict[str, str] = record.get("c", {})
    found = [Accelerator("ledger._fastscan", "C 帧扫描与哈希 frame scanner and hashing", fastscan.ACCELERATED,
                         _c_why("ledger._fastscan", built_c)),
             Accelerator("audit.query._jsonsplit", "C JSON 拆分 JSON splitter", jsonsplit.ACCELERATED, _c_why("audit.query._jsonsplit", built_c))]
    found += [Accelerator(f"replay.{state.game}", "mypyc 编译的规则 compiled rules", state.compiled, state.why) for state in _compiled.STATES]
    if not _compiled.STATES:
        found.append(Accelerator("replay.junqi, replay.paohuzi", "mypyc 编译的规则 compiled rules", False,
                                 "无构建记录 no build record (replay/compiled.json): reinstall with `pip install -e .`"))
    return found


def _c_why(name: str, built: dict[str, str]) -> str:
    if os.environ.get("MATCHLEDGER_NO_ACCEL"):
        return "运行时设置了 MATCHLEDGER_NO_ACCEL / MATCHLEDGER_NO_ACCEL set at run time"
    if built.get(name) == "failed":
        return "构建失败 the C build failed (a C compiler and OpenSSL's headers are needed): reinstall with `pip install -e .`"
    return "未构建 not built: reinstall with `pip install -e .`"


def describe() -> str:
    """Returns the accelerators as lines under a heading, for `--version`."""
    return "\n".join(["加速模块 accelerators:", *(f"  {a.line()}" for a in accelerators())])


def summary(found: list[Accelerator]) -> str:
    """Returns the accelerators as one short line, for `demo`."""
    return "加速模块 accelerators: " + ", ".join(f"{a.name} {'✓' if a.in_use else '✗ (' + a.why + ')'}" for a in found)
