"""The arbitration report of one game (DESIGN.md audit/, issue 15): result, findings with their rule
linked to their step, the timeline, a time chart, the board at every step, the rule profile, and
the game's entries proved against the checkpoint; and the tournament page."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from audit.presentation import report
from audit.presentation.articles import ARTICLES, article_text
from audit.presentation.codes import CODES
from audit.presentation.engine_words import RULES, rule
from audit.presentation.report import arbitration_table, related_events
from ledger import Ledger, LogReader, Pending
from replay.picture import AS_CLAIMED
from replay.protocol import RULE_BOOKS
from replay.run import replay_game
from schemas import encode
from schemas.common import GameStarted, Ruling
from schemas.envelope import Event
from tests.ledger_support import cli


def test_report_of_a_game_with_a_planted_illegal_move(tmp_path: Path) -> None:
    root, out = tmp_path / "l", tmp_path / "r.html"
    assert cli("simulate", "checkers", "--tournament", "--players", "4", "--rounds", "1", "--seed", "5",
               "--inject", "illegal-move", "--ledger", str(root)).exit_code == 0
    audit = json.loads(cli("audit", "--ledger", str(root), "--json").stdout)
    bad = audit["findings"][0]
    result = cli("report", "--ledger", str(root), "--game", bad["stream"], "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["findings"] >= 1 and summary["proof"].startswith("verified: 流 ") and "had exactly" in summary["proof"]
    page = out.read_text()
    assert bad["code"] in page and "class='bad'" in page
    assert f"{bad['code']} <code>{bad['name']}</code>" in page, "a checkers code shows its checkers.md name (issue 16)"
    assert f"<a href='#s{bad['seq']}'>" in page, "the finding links to its step"
    assert f"<figure id='b{bad['seq']}'>" in page and "mark-illegal" in page, "the board at the finding, the refused move drawn"
    assert "signed by" in page and "check-proof" in page
    assert "已证明：本局" in page and "<details><summary>签名检查点 signed checkpoint</summary><pre>" in page, "signatures folded away"
    assert "<html lang='zh-Hans'>" in page and "Noto Sans CJK SC" in page and "@media print" in page
    assert "<th>设置 setting</th>" in page and "JunqiProfile(" not in page and "CheckersProfile(" not in page, "the profile is a table"
    replayed = replay_game(list(LogReader(root).events(bad["stream"])))
    assert replayed.outcome is not None and replayed.outcome.termination == "UNVERIFIED", "checkers' default: stop_unverified"
    verdict = page.split("id='verdict'>")[1].split("</p>")[0]
    assert verdict.startswith("结果：未验证：引擎未能推导结果，按声称结果计入") and "检查于第" in verdict and "the check stopped at move" in verdict
    claimed = page.split("<th>声称结果 claimed result</th>")[1].split("</tr>")[0]
    assert "未验证，无从比较" in claimed and "≠" not in claimed and "与推导不同" not in verdict, "an unverified game's claim is not 'different'"


def test_report_of_a_long_junqi_game_stays_small(tmp_path: Path) -> None:
    """Issue 15: the report of a Junqi game of over 400 events is under 1 MB (it was 8.8 MB with
    an SVG per step): the board is drawn once and each step is a compact frame; every step still
    has its frame, and the timeline a row."""
    root, out = tmp_path / "l", tmp_path / "r.html"
    assert cli("simulate", "junqi", "--games", "4", "--seed", "1", "--ledger", str(root)).exit_code == 0
    counts = json.loads(cli("query", "--ledger", str(root), "--json",
                            "SELECT stream, count(*) AS n FROM events GROUP BY stream ORDER BY n DESC LIMIT 1").stdout)
    stream, events = counts["rows"][0]
    assert events >= 400, f"the longest game has {events} events"
    assert cli("report", "--ledger", str(root), "--game", stream, "--out", str(out)).exit_code == 0
    size = out.stat().st_size
    page = out.read_text()
    data = json.loads(page.split("<script type='application/json' id='frames'>")[1].split("</script>")[0].replace("<\\/", "</"))
    print(f"{stream}: {events} events, report {size:,} bytes")
    assert size < 1_000_000
    assert len(data["steps"]) == events == page.count("<tr id='s")
    assert all(len(cells) == 129 for cells, *_ in data["frames"]), "one cell per point of the board"


def test_tournament_page_lists_standings_crosstable_and_games(tmp_path: Path) -> None:
    """Issue 15: `report --tournament` writes the standings with every column and its legend, the
    crosstable and each game linked to its report, written beside the page."""
    root, out = tmp_path / "l", tmp_path / "site" / "t.html"
    out.parent.mkdir()
    made = json.loads(cli("simulate", "checkers", "--tournament", "--players", "4", "--rounds", "2", "--seed", "5",
                          "--ledger", str(root), "--json").stdout)
    result = cli("report", "--ledger", str(root), "--tournament", made["tournament"], "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["players"] == 4 and summary["games"] == made["games"] == len(summary["reports"])
    page = out.read_text()
    for column in ("big", "bh", "ps", "direct_encounter", "wins", "win_rate", "unverified"):
        assert f"<span lang='en'>{column}</span>" in page and f"<code>{column}</code>" in page
    assert "<br><span lang='en'>bh</span>" in page and "小分" in page and "累进分" in page, "one term a column (audit/presentation/terms.py)"
    assert "after round 2 of 2" in page and "computed from the signed checkpoint" in page
    assert re.search(r"the time of its last event \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", page), "the checkpoint's size, root and time"
    crosstable = page.split("class='crosstable'")[1].split("</table>")[0]
    assert crosstable.count("<tr>") == 5 and "第1轮 r1" in crosstable and "第2轮 r2" in crosstable
    assert crosstable.count("<small>座位 seat ") == 8, "each round's cell names the seat played"
    assert crosstable.count("先行 first") == made["games"], "and, in each game, who moved first"
    games = page.split("<table class='games'>")[1].split("</table>")[0]
    assert "<td></td>" not in games and games.count("<td>推导 derived</td>") == made["games"], "every game says it was derived, no blank cell"
    explained = page.split("id=\"players\"")[1]
    assert explained.count("<details>") == 4 and explained.count("<table class='explain'>") == 4, "a folded explanation per player"
    for written in summary["reports"]:
        assert f"href='{Path(written).name}'" in page and Path(written).exists()
        assert f"<a href='{out.name}'>↑ 赛事 tournament</a>" in Path(written).read_text(), "each game links back to the tournament"


def test_report_needs_a_game_or_a_tournament(tmp_path: Path) -> None:
    result = cli("report", "--ledger", str(tmp_path), "--out", str(tmp_path / "x.html"))
    assert result.exit_code == 2 and "give --game ID or --tournament ID" in result.output


def test_report_refuses_an_unknown_game(tmp_path: Path) -> None:
    root = tmp_path / "l"
    assert cli("init", "--ledger", str(root)).exit_code == 0
    result = cli("report", "--ledger", str(root), "--game", "nope", "--out", str(tmp_path / "x.html"))
    assert result.exit_code == 2 and "no game stream 'nope'" in result.stderr


class _AppealFiled(Event, frozen=True, kw_only=True, tag="appeal.filed"):
    """An appeal as the arbitration work records it in the tournament's stream (issue 15 item 1)."""

    player: str
    game: str
    grounds: str


class _AppealDecided(Event, frozen=True, kw_only=True, tag="appeal.decided"):
    """The committee's decision on an appeal of the same stream."""

    appeal: int
    decision: str
    votes: list[dict[str, str]]
    text: str


def test_appeals_about_a_game_show_field_by_field() -> None:
    """Issue 15 item 6: appeals and decisions show under the game they concern, every field of
    theirs in full, though the report knows nothing of their kinds; another game's do not."""
    stream = "cup/r1/t1/g1"
    filed = [_AppealFiled(stream="cup", seq=7, ts=1000, player="P1", game=stream, grounds="迟到的 flag reveal"),
             _AppealFiled(stream="cup", seq=8, ts=1000, player="P2", game="cup/r1/t2/g1", grounds="other game")]
    decided = [_AppealDecided(stream="cup", seq=9, ts=2000, appeal=8, decision="rejected", votes=[], text="no"),
               _AppealDecided(stream="cup", seq=10, ts=3000, appeal=7, decision="upheld", votes=[{"member": "a", "vote": "uphold"}],
                              text="维持 upheld 2–1")]
    related = related_events([*filed, *decided], stream)
    assert [ev.seq for ev in related] == [7, 10]
    table = arbitration_table(related)
    assert "appeal.filed" in table and "grounds: 迟到的 flag reveal" in table and "player: P1" in table
    assert "decision: upheld" in table and "维持 upheld 2–1" in table
    assert "&quot;vote&quot;:&quot;uphold&quot;" in table, "nested fields shown as JSON"


def test_rulings_and_penalties_of_a_game_show_in_its_report(tmp_path: Path) -> None:
    """Issue 15 item 6: a referee's ruling and a penalty card recorded in the game's stream show
    under appeals and rulings with every field, and in the timeline."""
    root, out = tmp_path / "l", tmp_path / "r.html"
    assert cli("simulate", "checkers", "--games", "1", "--seed", "2", "--ledger", str(root)).exit_code == 0
    rows = json.loads(cli("query", "--ledger", str(root), "--json", "SELECT stream, max(seq), max(ts) FROM events GROUP BY stream").stdout)
    stream, last, ts = rows["rows"][0]
    extra = [{"kind": "game.penalty", "stream": stream, "seq": last + 1, "ts": ts + 1000, "seat": 1, "card": "yellow",
              "reason": "slow play 超时", "article": "第十条"},
             {"kind": "game.ruling", "stream": stream, "seq": last + 2, "ts": ts + 2000, "corrects": last, "article": "第十四条",
              "text": "result stands 维持原判"}]
    recorded = cli("record", "--ledger", str(root), "-", input="\n".join(json.dumps(x, ensure_ascii=False) for x in extra).encode())
    assert recorded.exit_code == 0, recorded.output
    assert cli("report", "--ledger", str(root), "--game", stream, "--out", str(out)).exit_code == 0
    page = out.read_text()
    section = page.split("<table class='arbitration'>")[1].split("</table>")[0]
    assert f"{stream}#{last + 1}" in section and "game.penalty" in section and "reason: slow play 超时" in section
    assert "game.ruling" in section and f"corrects: {last}" in section and "text: result stands 维持原判" in section
    assert f"<tr id='s{last + 2}'" in page


def _frames_of(page: str) -> dict[str, Any]:
    return dict(json.loads(page.split("<script type='application/json' id='frames'>")[1].split("</script>")[0].replace("<\\/", "</")))


def _beyond_the_halt(tmp_path: Path, game: str, players: int) -> tuple[dict[str, Any], str, dict[str, Any], set[int]]:
    """Reports the game of a one-round tournament with an illegal move planted, checks what every
    board beyond the halt shows (moved as the log claims, captioned as not derived, its row marked),
    and returns the finding, the page, its frames and the frames shown beyond the halt."""
    root, out = tmp_path / "l", tmp_path / "r.html"
    assert cli("simulate", game, "--tournament", "--players", str(players), "--rounds", "1", "--games-per-round", "1", "--seed", "3",
               "--inject", "illegal-move", "--ledger", str(root)).exit_code == 0
    audit = json.loads(cli("audit", "--ledger", str(root), "--json").stdout)
    bad = next(f for f in audit["findings"] if f["severity"] == "error" and f["code"].startswith(f"{game}."))
    assert cli("report", "--ledger", str(root), "--game", bad["stream"], "--out", str(out)).exit_code == 0
    page = out.read_text()
    data = _frames_of(page)
    halt = next(i for i, (seq, _) in enumerate(data["steps"]) if seq == bad["seq"])
    shown = {f for _, f in data["steps"][halt + 1:]} - {data["steps"][halt][1]}
    assert len(shown) > 10, "the claimed moves move the pieces"
    assert all(data["frames"][f][3].startswith(AS_CLAIMED) for f in shown), "every board beyond the halt says it is not derived"
    assert page.count("class=claimed") == len(data["steps"]) - halt - 1
    return bad, page, data, shown


def test_beyond_a_halted_replay_the_board_is_shown_as_the_log_claims(tmp_path: Path) -> None:
    """Issue 31 point 6: after an illegal move halts a Junqi replay (flag_and_stop), each later move
    still moves the viewer's board, as the log claims it (its claimed combat result), every such
    board captioned as not derived and its timeline row marked; the summary says where replay stopped."""
    bad, page, _, _ = _beyond_the_halt(tmp_path, "junqi", players=8)
    assert f"重放在 seq {bad['seq']} 处因 {bad['code']}" in page and f"the replay stopped at seq {bad['seq']} by {bad['code']}" in page


def test_beyond_a_stopped_checkers_check_the_board_is_shown_as_the_log_claims(tmp_path: Path) -> None:
    """Issue 31 point 6, checkers.md §4.7 (stop_unverified): after an illegal move stops the check,
    each later move still moves the viewer's board, as the log claims it, every such board
    captioned as not derived, its timeline row marked, and the pieces still 10 a side."""
    _, _, data, shown = _beyond_the_halt(tmp_path, "checkers", players=4)
    assert all(sorted(Counter(data["frames"][f][0].replace(".", "")).values()) == [10, 10] for f in shown), "10 pieces a side"


def test_findings_quote_their_article_in_chinese(tmp_path: Path) -> None:
    """Issue 31 point 1: a finding shows its rule in Chinese and quotes its article's own words from
    the seed rule book (audit/presentation/articles.py), not only its number; no Python value reaches the page."""
    root, out = tmp_path / "l", tmp_path / "r.html"
    assert cli("simulate", "checkers", "--tournament", "--players", "4", "--rounds", "1", "--seed", "5",
               "--inject", "illegal-move", "--ledger", str(root)).exit_code == 0
    bad = json.loads(cli("audit", "--ledger", str(root), "--json").stdout)["findings"][0]
    assert cli("report", "--ledger", str(root), "--game", bad["stream"], "--out", str(out)).exit_code == 0
    row = out.read_text().split("<table class='findings'>")[1].split("</table>")[0]
    quote = article_text(RULE_BOOKS["checkers"], bad["article"])
    assert quote and f"<q>{quote}</q>" in row and (rule(bad["code"]) or "?") in row
    assert "True" not in row and "None" not in row and "('" not in row


SEEDS = Path("/work/shared/seeds")
"""The seed rule books the article quotes come from (outside the package; present in the project's workspace)."""


def _seed_text(book: str) -> str:
    """Returns a seed rule book's text as the quotes compare to it: no whitespace, no pinyin glosses."""
    name = {RULE_BOOKS["junqi"]: "junqi", RULE_BOOKS["paohuzi"]: "paohuzi", RULE_BOOKS["checkers"]: "checkers-1v1"}[book]
    text = next(SEEDS.glob(f"{name}*.zh.txt")).read_text(encoding="utf-8")
    return re.sub(r"\s+", "", re.sub(r"\([a-zāáǎàēéěèīíǐìōóǒòūúǔùǖǘǚǜü]+\)", "", text))


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seed rule books are not in this workspace")
def test_article_quotes_are_the_rule_books_own_words() -> None:
    """Issue 31 point 1: every quote in audit/presentation/articles.py is the seed rule book's text (cut at a
    sentence, a title set off by `：`), and every article a finding code cites in its own game's
    rule book has a quote, except Paohuzi articles the surviving fragment lacks."""
    for (book, article), quote in ARTICLES.items():
        seed = _seed_text(book)
        for part in filter(None, re.split(r"[：\s…]", quote)):
            assert part in seed, f"{book} {article}: {part!r} is not in the seed"
    for code in CODES.values():
        cited = RULE_BOOKS.get(code.code.partition(".")[0])
        if cited and code.article and code.article.startswith("第") and cited != RULE_BOOKS["paohuzi"]:
            assert article_text(cited, code.article), f"{code.code} cites {code.article} of {cited}, which has no quote"
    assert set(RULES) == set(CODES), "every finding code has its rule in Chinese (audit/presentation/terms.py)"


def test_unsigned_events_are_not_shown_as_fact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DESIGN.md "Nothing unsigned counts": events committed after the newest signed checkpoint (as
    the whole-log read of a ledger without an index returns them) are left out of the replay, the
    result, the timeline and the appeals and rulings tables; the report names them, seq and kind, as
    unsigned, and proves only the signed ones."""
    root, out = tmp_path / "l", tmp_path / "r.html"
    assert cli("simulate", "checkers", "--games", "1", "--seed", "2", "--ledger", str(root)).exit_code == 0
    stream = next(e.stream for e in LogReader(root).events() if isinstance(e, GameStarted))
    signed = list(LogReader(root).events(stream))
    last = signed[-1]
    forged = Ruling(stream=stream, seq=last.seq + 1, ts=last.ts + 1000, corrects=last.seq, text="无签名的改判 an unsigned override",
                    winners=[0], points=[1, 0])
    led = Ledger.open(root)
    try:
        led.append([Pending(0, forged, encode(forged))], checkpoint=False)
        assert led.size == led.checkpoint_size + 1
    finally:
        led.close()

    class WithUnsigned(LogReader):  # as the whole-log read of a ledger without an index would return them
        def events(self, name: str | None = None) -> Iterator[Event]:
            return iter([*signed, forged]) if name == stream else super().events(name)

    monkeypatch.setattr(report, "LogReader", WithUnsigned)
    report.write_report(root, stream, out)
    page = out.read_text()
    assert f"未签名记录 1 条（seq {forged.seq}–{forged.seq}）" in page and "1 unsigned entries" in page
    assert "无签名的改判" not in page and f"<tr id='s{forged.seq}'" not in page and "生效结果" not in page
    assert page.count("<tr id='s") == len(signed)


def test_a_claimed_score_that_differs_is_marked(tmp_path: Path) -> None:
    """Issue 31 point 4, 竞技跑胡子 第十条 (paohuzi.E01): a claim whose winner and termination agree but
    whose points do not is marked in the result table (≠ 得分 points) and said in the opening sentence;
    point 5: the result table writes out the 胡 (who, on which card, 胡息, 名堂, 囤 × 番, the groups)."""
    root, out = tmp_path / "l", tmp_path / "r.html"
    made = cli("simulate", "paohuzi", "--tournament", "--players", "6", "--rounds", "1", "--games-per-round", "1", "--seed", "3",
               "--inject", "wrong-score", "--ledger", str(root), "--json")
    assert made.exit_code == 0, made.output
    stream = json.loads(made.stdout)["planted"]["stream"]
    assert cli("report", "--ledger", str(root), "--game", stream, "--out", str(out)).exit_code == 0
    page = out.read_text()
    verdict = page.split("id='verdict'>")[1].split("</p>")[0]
    assert verdict.startswith("推导结果：") and "软件声称的得分与推导不同。" in verdict and "claimed points differ from the derived" in verdict
    claimed = page.split("<th>声称结果 claimed result</th>")[1].split("</tr>")[0]
    assert "≠ 与推导不同 differs: 得分 points</b>" in claimed and "胜方" not in claimed and "<tr class=bad><th>声称结果" in page
    hu = page.split("<th>胡牌 hu</th><td>")[1].split("</td>")[0]
    assert re.search(r"胡 hu：座位 seat \d .*；\d+ 胡息；名堂 .*；\d+ 囤 × \d+ 番 = \d+<br>组牌 groups：", hu), hu
    assert not re.search(r"\b[xd](10|[1-9])\b", hu), "cards by their names, not the log's codes"


def test_page_durations_read_to_the_millisecond() -> None:
    """Issue 31 points 11, 14: a mean move time (tie-break trimmed_ms) reads m:ss.mmm on the page,
    not 3:56.52725; a whole count of milliseconds keeps its value."""
    from audit.presentation.tournament_report import page_cell

    assert page_cell(236_527.25, "trimmed_ms") == "3:56.527" and page_cell(1_000_000, "move_ms") == "16:40"
    assert page_cell(61_500, "move_ms") == "1:01.500" and page_cell(True, "unresolved") == "是 yes"
    assert page_cell([], "bh_prev") == page_cell(None, "bh_prev") == "–", "round 1 has no previous round: never a blank cell"


def test_timeline_rows_do_not_repeat_the_action() -> None:
    """Issue 31 point 9: a move's row does not repeat in its fields the ends its action names, nor a
    one-step path, nor a field at its default (a move the platform did not make), nor a move-time
    claim the seq of the move just before it; what the action does not name stays."""
    from schemas.checkers import Moved as CheckersMoved
    from schemas.common import MoveTimeUsed

    moved = CheckersMoved(stream="g", seq=8, ts=1, seat=0, from_=4, to=15, path=(4, 15))
    assert report._own(moved, report.fields(moved), "4>15", 7) == {}
    hops = CheckersMoved(stream="g", seq=8, ts=1, seat=0, from_=79, to=117, path=(79, 104, 117), system=True)
    assert report._own(hops, report.fields(hops), "79>117", 7) == {"path": (79, 104, 117), "system": True}
    claim = MoveTimeUsed(stream="g", seq=9, ts=2, seat=0, ms=1542, move_seq=8)
    assert "move_seq" not in report._own(claim, report.fields(claim), "", 8) and "ms" in report._own(claim, report.fields(claim), "", 8)
    assert report._own(claim, report.fields(claim), "", 5)["move_seq"] == 8, "a claim about another move says so"


def test_duplicate_crosstable_names_the_opponents(tmp_path: Path) -> None:
    """Issue 31 point 11: each round's cell of a duplicate (Junqi) crosstable names the seat played
    and the two players of the other alliance (seats 0 and 2 against 1 and 3), never the partner."""
    from audit.presentation.tournament_report import _opponents

    assert _opponents(["a", "b", "c", "d"], 0) == ["b", "d"] and _opponents(["a", "b", "c", "d"], 3) == ["a", "c"]
    assert _opponents(["a", "b", "c"], 1) == ["a", "c"] and _opponents(["a", "b"], 0) == ["b"]
    root, out = tmp_path / "l", tmp_path / "site" / "t.html"
    out.parent.mkdir()
    made = json.loads(cli("simulate", "junqi", "--tournament", "--players", "8", "--rounds", "1", "--games-per-round", "1",
                          "--seed", "3", "--ledger", str(root), "--json").stdout)
    assert cli("report", "--ledger", str(root), "--tournament", made["tournament"], "--out", str(out)).exit_code == 0
    crosstable = out.read_text().split("class='crosstable'")[1].split("</table>")[0]
    seated = {e.stream: {h.seat: h.holder for h in e.seats} for e in LogReader(root).events() if isinstance(e, GameStarted)}
    for row in crosstable.split("<tr>")[2:]:
        player = re.search(r"<td>(P\d+)", row).group(1)  # type: ignore[union-attr]
        vs = set(re.search(r"对 vs ([^<]+)</small>", row).group(1).split("、"))  # type: ignore[union-attr]
        holders = next(h for h in seated.values() if player in h.values())
        seat = next(s for s, p in holders.items() if p == player)
        assert vs == {holders[(seat + 1) % 4], holders[(seat + 3) % 4]}, (player, vs)
