"""Every finding the replay reports, the audit reports, once per fault, with its article (issue 30
points 7 and 10): Junqi 第十四条 (a ruling that cannot be applied, audit.A07, beside the A04 of the same
ruling), 第九条 (a false result claim: junqi.E02, not an article-less audit.C01)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from audit.certification.certify import certify
from audit.query.arbitration import sign
from ledger import LogReader, Signer, record
from schemas import encode
from schemas.common import GameEnded, Ruling
from tests.ledger_support import cli
from tests.test_arbitration import HOUR, Cup, T


def test_a_ruling_that_cannot_be_applied_is_in_the_audit_beside_its_other_fault(cup: Cup, tmp_path: Path) -> None:
    """第十四条: a result override after the game's end, on no appeal (audit.A04) and naming seat 3 of a
    two-seat game (audit.A07, which `replay` reports): the audit reports both, neither hides the other."""
    root = tmp_path / "ledger"
    shutil.copytree(cup.root, root)
    game = cup.games["rejected"]
    events = list(LogReader(root).events(game))
    claim = [e for e in events if isinstance(e, GameEnded)][-1]
    ruling = Ruling(stream=game, seq=len(events), ts=claim.ts + HOUR, corrects=claim.seq, text="x", ruling="result_override", winners=[3])
    record(root, [encode(sign(ruling, Signer.load(cup.keys / "zhang.key")))])
    replayed = {(f["code"], f["seq"], f["article"]) for f in json.loads(cli("replay", "--ledger", str(root), "--json").stdout)["findings"]}
    assert ("audit.A07", ruling.seq, "第十四条") in replayed
    audited = {(f["code"], f["seq"], f["article"]) for f in certify(root, T).findings}
    assert audited == replayed | {("audit.A04", ruling.seq, "第十四条 (1)")}


def test_a_false_result_is_the_engines_finding_with_its_article_in_the_audit(tmp_path: Path) -> None:
    """Junqi 第九条: `simulate --inject false-result` is junqi.E02 (第九条) in `replay` and in `audit`
    alike, not audit.C01 without an article."""
    root = str(tmp_path / "l")
    assert cli("simulate", "junqi", "--tournament", "--players", "8", "--rounds", "1", "--inject", "false-result", "--ledger", root).exit_code == 0
    replayed = {(f["code"], f["seq"], f["article"]) for f in json.loads(cli("replay", "--ledger", root, "--json").stdout)["findings"]}
    audited = {(f["code"], f["seq"], f["article"]) for f in json.loads(cli("audit", "--ledger", root, "--json").stdout)["findings"]}
    assert audited == replayed and {code for code, _, _ in audited} == {"junqi.E02"}
