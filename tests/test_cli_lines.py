"""Issue 29.6: one output layer for the text lines too. A command builds its typed result once and
prints it with one `emit` (its `lines()` are the text form); no command hand-builds a line with `say`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from audit.cli.results import Counted, HuJudged, SourceAdded, Trust, Witnessed

CLI = Path(__file__).resolve().parents[1] / "audit" / "cli"

ALLOWED = {
    ("watch.py", "finding_said"): "watch streams each finding as it is found, for as long as the log grows: no result to wait for",
    ("watch.py", "finding"): "the same stream as NDJSON (`watch --json`), one finding a line",
}
"""The `say` calls left in audit/cli, by file and the function whose line it prints, and why."""


def _says(cli: Path = CLI) -> list[tuple[str, int, str]]:
    """Returns each `say(…)` / `emit_json(…)` call in audit/cli: file, line, what it prints."""
    found = []
    for path in sorted(cli.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("say", "emit_json"):
                arg = node.args[0] if node.args else None
                what = arg.func.id if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) else ast.unparse(arg) if arg else ""
                found.append((path.name, node.lineno, what))
    return found


def test_no_hand_built_lines_in_the_cli() -> None:
    """Issue 29.6 (one path per job): every line a person reads comes from a result's `lines()`
    through `emit`; the only `say` left is watch's stream of findings (ALLOWED, with why)."""
    stray = [(name, line, what) for name, line, what in _says() if (name, what) not in ALLOWED]
    assert stray == [], f"hand-built lines in audit/cli (give the result a lines()): {stray}"


def test_the_check_sees_a_hand_built_line(tmp_path: Path) -> None:
    """The structural check can fail: a `say(f"...")` planted in a copy of audit/cli is found."""
    for path in CLI.glob("*.py"):
        (tmp_path / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    with (tmp_path / "games.py").open("a", encoding="utf-8") as f:
        f.write('\n\ndef planted() -> None:\n    say(f"wrote {1}")\n')
    assert ("games.py", "f'wrote {1}'") in {(n, w) for n, _, w in _says(tmp_path)}


def test_text_only_values_are_no_json_keys() -> None:
    """Issue 29.6 (JSON unchanged): what only the text says (hu's decomposition) is no `--json` key."""
    import msgspec

    judged = HuJudged(hu=True, huxi=15, red=3, big=8, small=10, mingtang=[], score=2, reason="ok").told(decomposition=["一二三"])
    assert "decomposition" not in msgspec.json.decode(msgspec.json.encode(judged))
    assert "组牌 decomposition: 一二三" in judged.lines()


def test_lines_follow_the_result() -> None:
    """Issue 29.6: the text is the result's: perft's count is its last line, witness's first visit says so."""
    assert Counted(counts=[20, 400], count=400, divide={"a": 1}).lines() == ["a: 1", "depth 1: 20", "depth 2: 400", "400"]
    trust = Trust(key={}, verified_size=None, verified_root=None, unsigned=0)  # lines() does not show it
    first = Witnessed(ok=True, origin="o", size=5, root="ab", previous_size=None, state="s", trust=trust)
    assert first.lines()[0].startswith("首次见证 / first visit")
    grew = Witnessed(ok=True, origin="o", size=7, root="ab", previous_size=5, state="s", trust=trust)
    assert "grew from 5 to 7" in grew.lines()[0]


def test_source_commands_print_the_event_key_for_key_and_in_both_languages(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 29.6 (JSON unchanged, a referee reads Chinese): `source add/revoke --json` is the event the
    log recorded, key for key (a key the event gains fails the typed result), and the text is zh-Hans first."""
    import json

    import msgspec

    import ledger as ledger_api
    from tests.ledger_support import cli

    assert cli("keygen", "--name", "venue", "--out", str(tmp_path / "venue.key")).exit_code == 0
    added = cli("source", "add", "--ledger", str(ledger_dir), "--name", "venue", "--key", str(tmp_path / "venue.pub"),
                "--tournament", "cup", "--json")
    assert added.exit_code == 0, added.output
    recorded = [msgspec.to_builtins(e) for e in ledger_api.LogReader(ledger_dir).events() if e.kind == "source.registered"]
    assert json.loads(added.output) == recorded[-1] and list(json.loads(added.output)) == list(recorded[-1])
    revoked = cli("source", "revoke", "--ledger", str(ledger_dir), "--name", "venue", "--reason", "left")
    assert revoked.exit_code == 0 and revoked.output.startswith("已吊销来源 / revoked source venue"), revoked.output
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        msgspec.convert({**recorded[-1], "extra": 1}, SourceAdded)
