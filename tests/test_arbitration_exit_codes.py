"""Exit codes as README says (issue 30 point 14): 2 for what does not exist or is misused, with a
message naming the option, never "line 1" for a flag's value."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger import init
from tests.ledger_support import cli

HAND = "一,二,三,四,五,六,七,八,九,十,壹,贰,叁,肆,伍,陆,柒,捌,玖,拾"


@pytest.mark.parametrize(("args", "said"), [
    (("init",), "already holds a ledger"),
    (("consistency", "--old", "1000"), "no checkpoint of size 1000"),
    (("hu", "--hand", "xyz"), "--hand"),
    (("hu", "--hand", HAND, "--source", "nope"), "source must be self or other"),
])
def test_misuse_exits_2(tmp_path: Path, args: tuple[str, ...], said: str) -> None:
    """README's table of exit codes: 2, a usage error (an option's value or a name that does not exist)."""
    root = tmp_path / "l"
    init(root)
    result = cli(*args, "--ledger", str(root))
    assert result.exit_code == 2 and said in result.output, result.output


def test_an_appeal_option_out_of_the_contract_names_the_option_not_a_line(tmp_path: Path) -> None:
    """A ruling's `--winners 9` (seats are 0–3, the event contract) is the option's fault: exit 2, `--winners`, no "line 1"."""
    root, key = tmp_path / "l", tmp_path / "z.key"
    assert cli("simulate", "checkers", "--tournament", "--players", "4", "--rounds", "1", "--ledger", str(root)).exit_code == 0
    assert cli("keygen", "--name", "z", "--out", str(key)).exit_code == 0
    assert cli("appeal", "register", "--pub", str(tmp_path / "z.pub"), "--role", "referee", "--ledger", str(root)).exit_code == 0
    result = cli("appeal", "rule", "--stream", "checkers-cup-1/r1/t1/g1", "--kind", "forfeit", "--winners", "9", "--corrects", "1",
                 "--text", "x", "--key", str(key), "--ledger", str(root))
    assert result.exit_code == 2 and "--winners: Expected `int` <= 3" in result.output and "line 1" not in result.output


def test_keygen_never_replaces_a_key_and_names_its_id(tmp_path: Path) -> None:
    """Issue 30 point 13: keygen has no --force and does not suggest one; its message names the key id."""
    key = tmp_path / "a.key"
    made = cli("keygen", "--name", "a", "--out", str(key))
    assert made.exit_code == 0 and "key id: " in made.output
    again = cli("keygen", "--name", "a", "--out", str(key))
    assert again.exit_code == 2 and "--force" not in again.output and "never replaced" in again.output


def test_verify_with_a_witness_key_that_never_co_signed_is_not_ok(tmp_path: Path) -> None:
    """Issue 30 point 13: `verify --witness-key K` where K co-signed nothing says so, naming its key id, and exits 1."""
    root, key = tmp_path / "l", tmp_path / "w.key"
    init(root)
    assert cli("keygen", "--name", "w", "--out", str(key)).exit_code == 0
    result = cli("verify", "--ledger", str(root), "--witness-key", str(tmp_path / "w.pub"))
    assert result.exit_code == 1 and "--witness-key w (key id " in result.output and "co-signed no checkpoint" in result.output
