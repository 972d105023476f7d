"""The commands' typed results (audit/cli/results.py): a summary the library hands over as a mapping
and the CLI converts to its result type refuses a key the type does not declare, so a misspelt or
added key fails at the boundary instead of vanishing from `--json` (README: the `--json` keys column)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from audit.cli import results
from tests.ledger_support import cli, game_lines

CLI = Path(results.__file__).parent
CONVERTED = re.compile(r"msgspec\.convert\([^\n]*?,\s*(\w+)\)")

SizedResult = results.Sent | results.SimulatedLive | results.Demonstrated | results.CertificateChecked
"""The results checked here: each carries the tree size."""

VALID: dict[type[SizedResult], dict[str, Any]] = {
    results.Sent: {"events": 3, "batches": 1, "first": 0, "last": 2, "size": 3, "signature_checked": True},
    results.SimulatedLive: {"tag": "run", "tables": 1, "games": 1, "events": 9, "size": 12, "streams": ["run/t1"]},
    results.Demonstrated: {"ok": True, "size": 5, "root": "ab", "tournaments": ["t"], "games": 1, "findings": 0,
                           "checks": {"scores": {"passed": 1, "failed": 0}}, "accelerators": {"merkle": True}},
    results.CertificateChecked: {"ok": True, "verdict": "CERTIFIED", "certified": True, "reason": "", "as_of": None,
                                 "origin": "o", "size": 5, "root": "ab", "auditor": "a", "statement": {}},
}


def test_every_result_the_cli_converts_from_a_mapping_forbids_unknown_keys() -> None:
    """Each `msgspec.convert(…, Result)` of audit/cli/*.py targets a type that forbids unknown fields."""
    converted = {name for path in CLI.glob("*.py") for name in CONVERTED.findall(path.read_text())}
    assert {"Sent", "SimulatedLive", "Demonstrated", "CertificateChecked"} <= converted
    lax = [name for name in sorted(converted) if not getattr(results, name).__struct_config__.forbid_unknown_fields]
    assert lax == []


@pytest.mark.parametrize("kind", list(VALID), ids=lambda kind: kind.__name__)
def test_a_misspelt_key_is_refused_naming_it(kind: type[SizedResult]) -> None:
    """A summary with a typo'd key (`evnets` beside the real ones) is an error naming the key, not a key dropped."""
    assert msgspec.convert(VALID[kind], kind).size == VALID[kind]["size"]
    with pytest.raises(msgspec.ValidationError, match="unknown field `evnets`"):
        msgspec.convert({**VALID[kind], "evnets": 3}, kind)


CJK = re.compile(r"[\u4e00-\u9fff]")


def _said(result) -> list[str]:  # noqa: ANN001 - click's Result
    assert result.exit_code == 0, result.output
    return [line for line in result.stdout.splitlines() if line.strip()]


def _chinese_first(line: str) -> bool:
    """Tells whether a line opens in zh-Hans: a CJK character before its first English word."""
    cjk, word = CJK.search(line), re.search(r"[A-Za-z]{2,}", line)
    return cjk is not None and (word is None or cjk.start() < word.start())


def test_the_log_commands_say_their_results_in_chinese_with_english_beside(tmp_path: Path) -> None:
    """Issue 31 point 1: init, record, verify, prove, check-proof, keygen and appeal register say their
    results zh-Hans first with English beside (terms from audit/presentation/terms.py); --json is unchanged."""
    root, events, bundle, key = tmp_path / "l", tmp_path / "e.jsonl", tmp_path / "b.json", tmp_path / "z.key"
    events.write_bytes(b"\n".join(game_lines(2, 3)) + b"\n")
    pub = root / "signer.pub"
    said = {
        "init": _said(cli("init", "--ledger", str(root), "--origin", "results.test/log")),
        "record": _said(cli("record", "--ledger", str(root), str(events))),
        "verify": _said(cli("verify", "--ledger", str(root), "--key", str(pub))),
        "prove": _said(cli("prove", "--ledger", str(root), "--stream", "g1", "--out", str(bundle), "--key", str(pub))),
        "check-proof": _said(cli("check-proof", str(bundle), "--key", str(pub))),
        "keygen": _said(cli("keygen", "--name", "zhang", "--out", str(key))),
        "appeal register": _said(cli("appeal", "register", "--pub", str(tmp_path / "z.pub"), "--role", "referee",
                                     "--ledger", str(root))),
    }
    assert said["init"] == [f"已创建账本 / created ledger {root}", f"公钥 public key: {pub}"]
    assert said["record"] == ["已追加 6 个事件，0 个已存在；树大小 6 / appended 6 events, 0 already present; tree size 6"]
    verified = r"核对通过 / ok: 树大小 tree size 6, 根哈希 root [0-9a-f]{64}, 已核对检查点 checkpoints verified [1-9]"
    assert any(re.fullmatch(verified, line) for line in said["verify"]), said["verify"]
    assert said["prove"][0] == f"已将 g1 的 3 个条目连同包含证明写入 {bundle} / wrote 3 entries of g1 with inclusion proofs to {bundle}"
    assert said["check-proof"][0].startswith("核对通过 / ok: 流 g1 在大小为 6、由 "
                                             "results.test/log 签名的日志中恰有 3 个条目（第 0–2 号），本证明包含全部")
    assert [line.split(":")[0] for line in said["keygen"]] == ["私钥 private key", "公钥 public key", "密钥标识 key id"]
    assert said["appeal register"][0].startswith("已记录登记仲裁员 log.arbiters#")
    for command, lines in said.items():
        assert all(_chinese_first(line) for line in lines), (command, lines)


def test_trust_is_one_shape_with_the_keys_it_always_had(tmp_path: Path) -> None:
    """DESIGN.md "Nothing unsigned counts": every output's `trust` is one type (results.Trust) whose JSON
    keeps the keys and order scripts read: key, verified_size, verified_root, unsigned."""
    shaped = [kind for kinds in results.RESULTS.values() for kind in kinds if "trust" in kind.__struct_fields__]
    assert len(shaped) > 15 and all("Trust" in str(kind.__annotations__["trust"]) for kind in shaped)
    root = tmp_path / "l"
    assert cli("init", "--ledger", str(root)).exit_code == 0
    out = cli("verify", "--ledger", str(root), "--json").stdout
    trust = out[out.index('"trust":') + len('"trust":'):]
    assert trust.startswith('{"key":{') and '"verified_size":0,"verified_root":"' in trust and trust.rstrip().endswith(',"unsigned":0}}')
