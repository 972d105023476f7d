"""The arbitration reports and the tournament page, checked in a real browser (issue 15, item 7;
issue 31): headless Chromium (Debian's `chromium`, driven by Playwright without a browser download)
opens the report of a game of each kind, each with a planted illegal move, and the tournament page
(the checkers one with an upheld appeal carried out by a ruling), and checks what an arbiter needs:
nothing wider than a 1,280-px screen or a 390-px phone, the legend, the board at a finding with the
refused move drawn dashed, Chinese first (a floor on the share of Chinese among the letters of the
summary and findings, no Python values), seats told apart in grayscale, a summary sentence naming
the winner or why there is none and the ruling in force, a usable print layout.
Screenshots and PDFs are saved under each test's temporary directory.

Skips, saying why, only where Chromium or Playwright is not installed (.ci/run installs them)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from audit.presentation.tournament_report import game_report_path
from ledger import LogReader
from replay.picture import AS_CLAIMED, KEYS
from replay.run import replay_game
from schemas.common import GameEnded, GameStarted
from tests.ledger_support import cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("no chromium on PATH (apt-get install chromium fonts-noto-cjk; .ci/run does)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")

WIDTH = 1280
PHONE = 390
CJK_FLOOR = 0.22
"""The least share of Chinese characters among the letters (Chinese and Latin) of a report's summary
and findings: every sentence there is Chinese with English beside it, so about a quarter to a third
of the letters are Chinese (English spends some five letters a word, Chinese one or two characters);
before issue 31 a Junqi report's findings had 12 Chinese characters against 84 Latin letters (0.13)."""
HOUR = 3_600_000
GAMES = {  # game: simulate options giving a tournament with a planted illegal move
    "junqi": ("--players", "8", "--rounds", "1", "--games-per-round", "1"),
    "paohuzi": ("--players", "6", "--rounds", "1", "--games-per-round", "1"),
    "checkers": ("--players", "4", "--rounds", "1", "--games-per-round", "1"),
}


def _simulate(root: Path, game: str) -> dict[str, Any]:
    result = cli("simulate", game, "--tournament", *GAMES[game], "--seed", "3", "--inject", "illegal-move", "--ledger", str(root), "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def _run(root: Path, *args: str) -> dict[str, Any]:
    result = cli(*args, "--ledger", str(root), "--json")
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.output.splitlines()[-1]))


def _upheld_appeal(base: Path, tournament: str, game: str) -> int:
    """Plants 第十九条 / 第十四条 (1): an appeal on `game`, upheld 2–1, carried out by the chief
    referee's result override giving the game to seat 1; returns the ruling's seq."""
    root, keys = base / "ledger", base / "keys"
    keys.mkdir()
    for name, role in (("zhang", "chief_referee"), ("li", "committee")):
        assert cli("keygen", "--name", name, "--out", str(keys / f"{name}.key")).exit_code == 0
        _run(root, "appeal", "register", "--pub", str(keys / f"{name}.pub"), "--role", role, "--name", name.title(), "--at", "1")
    events = list(LogReader(root).events(game))
    start, claim = events[0], [e for e in events if isinstance(e, GameEnded)][-1]
    assert isinstance(start, GameStarted)
    filed = claim.ts + HOUR
    appeal = _run(root, "appeal", "file", "--tournament", tournament, "--game", game, "--player", start.seats[0].holder,
                  "--grounds", "对手超时未判 the clock failed", "--at", str(filed))["seq"]
    decided = _run(root, "appeal", "decide", "--tournament", tournament, "--appeal", str(appeal), "--decision", "upheld",
                   "--vote=li=uphold", "--vote=wang=uphold", "--vote=zhao=reject", "--text", "申诉成立 upheld",
                   "--key", str(keys / "li.key"), "--at", str(filed + HOUR))["seq"]
    ruled = _run(root, "appeal", "rule", "--stream", game, "--kind", "result_override", "--corrects", str(claim.seq), "--winners", "1",
                 "--text", "改判 result corrected after the upheld appeal", "--carries-out", f"{tournament}#{decided}",
                 "--key", str(keys / "zhang.key"), "--at", str(filed + 2 * HOUR))
    return int(ruled["seq"])


RULED: dict[str, tuple[str, int]] = {}
"""Per game kind, the game that carries an upheld appeal's ruling and the ruling's seq."""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str, int]]:
    """Per game: the tournament page written by `report --tournament`, the stream of the game with
    the planted illegal move, and that move's seq. The checkers tournament's other game carries an
    upheld appeal and the ruling that carried it out (`RULED`)."""
    out: dict[str, tuple[Path, str, int]] = {}
    for game in GAMES:
        base = tmp_path_factory.mktemp(game)
        made = _simulate(base / "ledger", game)
        audit = json.loads(cli("audit", "--ledger", str(base / "ledger"), "--json").stdout)
        bad = next(f for f in audit["findings"] if f["severity"] == "error" and f["stream"] != made["tournament"])
        if game == "checkers":
            other = next(s for s in _streams(base / "ledger", made["tournament"]) if s != bad["stream"])
            RULED[game] = (other, _upheld_appeal(base, made["tournament"], other))
        page = base / "site" / "tournament.html"
        page.parent.mkdir()
        result = cli("report", "--ledger", str(base / "ledger"), "--tournament", made["tournament"], "--out", str(page), "--json")
        assert result.exit_code == 0, result.output
        out[game] = (page, bad["stream"], bad["seq"])
    return out


def _streams(root: Path, tournament: str) -> list[str]:
    return [e.stream for e in LogReader(root).events() if isinstance(e, GameStarted) and e.tournament == tournament]


def _open(browser: Any, path: Path, media: str = "screen", width: int = WIDTH) -> Any:
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.emulate_media(media=media)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page


def _overflow(page: Any) -> int:
    """Returns how many pixels the page is wider than the window (0: it fits)."""
    return int(page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))


def _nothing_cut(page: Any) -> bool:
    """Tells whether every scroll box shows all it holds (as on paper)."""
    return bool(page.evaluate("[...document.querySelectorAll('.scroll')].every(e => e.scrollHeight <= e.clientHeight + 1)"))


def _cjk_font(page: Any, selector: str) -> list[str]:
    """Returns the platform fonts Chromium used for an element's text (DevTools CSS domain)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")
    node = cdp.send("DOM.querySelector", {"nodeId": root["root"]["nodeId"], "selector": selector})
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})["fonts"]
    return [f["familyName"] for f in fonts]


def _check_chinese(page: Any) -> None:
    assert page.evaluate("document.documentElement.lang") == "zh-Hans"
    assert page.evaluate("document.fonts.check('16px \"Noto Sans CJK SC\"', '仲裁报告赛事成绩')")
    assert any("CJK" in f for f in _cjk_font(page, "h1")), "the heading's Chinese glyphs come from a CJK font"


def _game_report(pages: dict[str, tuple[Path, str, int]], game: str) -> tuple[Path, int]:
    tournament, stream, seq = pages[game]
    return game_report_path(tournament, stream), seq


@pytest.mark.parametrize("game", list(GAMES))
def test_game_report_in_the_browser(browser: Any, pages: dict[str, tuple[Path, str, int]], game: str, tmp_path: Path) -> None:
    """Issue 15 item 6–7: at 1,280 px nothing overflows; the legend names every seat; a finding's
    link shows the board at its step with the refused move dashed, and its board is drawn under
    the findings too; Chinese renders in a CJK font; the print layout fits and hides the controls."""
    report, seq = _game_report(pages, game)
    page = _open(browser, report)
    assert _overflow(page) <= 0, f"{game} report is {_overflow(page)} px too wide"
    seats = 4 if game == "junqi" else 3 if game == "paohuzi" else 2
    assert page.locator("table.legend tr").count() == seats + 1
    assert page.locator(f"#{game}-base .legend-row").count() == seats, "the board's own legend"
    assert page.locator(f"#viewer use[href='#{game}-base']").count() == 1
    _check_chinese(page)
    page.locator(f"table.findings a[href='#s{seq}']").first.click()
    page.wait_for_function(f"document.querySelector('#s{seq}').classList.contains('on')")
    illegal = page.locator("#viewer .mark-illegal")
    assert illegal.count() == 1 and illegal.is_visible()
    assert illegal.locator("polyline, circle").first.get_attribute("stroke-dasharray") == "8 5"
    assert f"seq {seq}" in page.locator("#steplabel").inner_text()
    box, view = illegal.bounding_box(), page.viewport_size
    assert box is not None and 0 <= box["y"] < view["height"], "the board at the finding is on screen"
    page.screenshot(path=str(tmp_path / f"{game}-finding.png"))
    page.locator("#next").click()  # issue 31 point 6: beyond a halted replay the board is the log's claim, said so
    beyond = page.locator("#viewer .caption").text_content() or ""
    assert beyond.startswith(AS_CLAIMED) == (game != "paohuzi"), f"{game}: {beyond}"  # a Paohuzi deal goes on derived
    page.locator(f"table.findings a[href='#s{seq}']").first.click()
    _check_stepping(page)
    assert page.locator(f"#b{seq} .mark-illegal").count() == 1, "the board at the finding is drawn under the findings"
    limit = page.locator("svg.timechart .limit")  # checkers has a move-time limit by default, the others none
    assert limit.count() == (1 if game == "checkers" else 0)
    page.emulate_media(media="print")
    assert _overflow(page) <= 0
    assert _nothing_cut(page), "in print every row of the timeline is laid out, none scrolled away"
    assert not page.locator(".controls").is_visible()
    assert page.locator(f"#b{seq}").is_visible()
    page.screenshot(path=str(tmp_path / f"{game}-print.png"), full_page=True)
    pdf = page.pdf(path=str(tmp_path / f"{game}.pdf"), format="A4")
    assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page") >= 2
    _check_print(page, report)
    assert len(re.findall(rb"/Type\s*/Page[^s]", pdf)) <= PRINTED_PAGES, "the timeline prints compactly"
    page.close()


def _check_stepping(page: Any) -> None:
    """Issue 31 point 9: the timeline is wide enough to read beside (or under) the board; ◀/▶ take a
    move and its game.move_time claim as one step; Home and End go to the first and last event; the
    step shown goes into the URL, and the time chart's bars link to their step."""
    box = page.locator(".replay .scroll").bounding_box()
    assert box is not None and box["width"] >= 450, f"the timeline is {box} wide"
    kinds = page.locator("#timeline tr[data-i]").evaluate_all("rows => rows.map(r => r.dataset.kind)")
    page.locator("body").press("Home")
    assert page.locator("#step").input_value() == "0"
    for _ in range(30):
        page.locator("#next").click()
        assert kinds[int(page.locator("#step").input_value())] != "game.move_time" or page.locator("#step").input_value() == str(len(kinds) - 1)
    seq = page.locator("#steplabel").inner_text().split()[1]
    assert page.evaluate("location.hash") == f"#s{seq}"
    page.locator("body").press("End")
    assert page.locator("#step").input_value() == str(len(kinds) - 1)
    bars = page.locator("svg.timechart a")
    assert bars.count() == 0 or (bars.first.get_attribute("href") or "").startswith("#s")


PRINTED_PAGES = 12
"""The most A4 sheets a simulated game's report may print on (a 300-event Junqi game prints on 9)."""


def _check_print(page: Any, report: Path) -> None:
    """Issue 31 point 12: every printed sheet carries the report's title (the game id) as a running
    header and `page n / N`; the viewer's board is labelled with the step it shows."""
    rules = page.evaluate("[...document.styleSheets].flatMap(s => [...s.cssRules]).filter(r => r instanceof CSSPageRule).map(r => r.cssText)")
    stream = report_stream(report, report)
    assert any("@top-left" in r and stream in r and "counter(page)" in r and "counter(pages)" in r for r in rules), rules
    label = page.locator("#printstep")
    assert label.is_visible() and re.search(r"seq \d+ 之后的局面", label.inner_text())


@pytest.mark.parametrize("game", list(GAMES))
def test_tournament_page_in_the_browser(browser: Any, pages: dict[str, tuple[Path, str, int]], game: str, tmp_path: Path) -> None:
    """Issue 15 item 6–7: the tournament page shows every standings column with its legend, the
    crosstable and every game linked to a report that exists; it fits 1,280 px and prints."""
    tournament, stream, _ = pages[game]
    page = _open(browser, tournament)
    assert _overflow(page) <= 0
    _check_chinese(page)
    players = page.locator("table.standings tr").count() - 1
    assert players >= 2 and page.locator("table.crosstable tr").count() == players + 1
    links = page.locator("table.games a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert links and all((tournament.parent / href).exists() for href in links)
    page.locator("table.games a", has_text=stream).click()
    page.wait_for_load_state("load")
    assert page.locator("h1").inner_text().startswith("仲裁报告")
    page.go_back()
    page.screenshot(path=str(tmp_path / f"{game}-tournament.png"), full_page=True)
    page.emulate_media(media="print")
    assert _overflow(page) <= 0
    page.close()


READ = "h1, h2, p, nav, figcaption, table:not(.profile), details, svg .caption, svg text"
"""What a person reads on a page; the rule profile's table shows the settings as the profile spells them."""


def _text(page: Any, selector: str) -> str:
    return str(page.evaluate(f"[...document.querySelectorAll({selector!r})].map(e => e.innerText ?? e.textContent).join('\\n')"))


def _cjk_share(text: str) -> float:
    """Returns the share of Chinese characters among the letters (CJK ideographs and Latin letters)."""
    cjk = len(re.findall(r"[\u4e00-\u9fff]", text))
    latin = len(re.findall(r"[A-Za-z]", text))
    return cjk / max(cjk + latin, 1)


PYTHON_VALUES = re.compile(r"\b(True|False|None)\b|\('|\[\d+(, \d+)*\]|\b(?![EW]_)[A-Z]+_[A-Z_]+\b")
"""Internal values a person must not read (issue 31 point 2): Python's booleans, None, tuples and
lists, and enum names such as `FLAG_CAPTURED` (checkers.md's code names, `E_OCCUPIED`, are shown
beside their codes on purpose)."""


def _relative_luminance(rgb: str) -> float:
    """Returns the WCAG relative luminance of a CSS `rgb(r, g, b)` colour: what grayscale print keeps."""
    channels = [int(c) / 255 for c in re.findall(r"\d+", rgb)[:3]]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _seat_marks(page: Any, game: str, seats: int) -> list[set[str]]:
    """Returns, per seat, the non-colour marks its pieces or markers carry on the board: the seat's
    letter or number written on them, or the outline that sets its pieces apart."""
    if game == "junqi":  # each seat's 13 symbols (12 kinds and the hidden piece), each with the seat's letter
        per = page.locator("#junqi-base").evaluate("() => document.querySelectorAll('[id^=junqi-]').length") - 2
        return [set(page.evaluate(f"[...Array({per // seats}).keys()].map(k => document.getElementById('junqi-' + {list(KEYS)!r}[{s} * "
                                  f"{per // seats} + k]).querySelector('text.seat').textContent)")) for s in range(seats)]
    if game == "checkers":  # the two pieces' outlines
        return [{page.evaluate(f"document.getElementById('checkers-{KEYS[s]}').firstElementChild.getAttribute('stroke-width')")}
                for s in range(seats)]
    return [{t} for t in page.evaluate("[...document.querySelectorAll('#paohuzi-base text[font-weight=bold]')].map(t => t.textContent)")]


@pytest.mark.parametrize("game", list(GAMES))
def test_pages_read_in_chinese_on_a_phone(browser: Any, pages: dict[str, tuple[Path, str, int]], game: str, tmp_path: Path) -> None:
    """Issue 31 points 1, 2, 4, 7, 10: at 390 px no report and no tournament page is wider than the
    screen; the summary and findings are Chinese first (share above `CJK_FLOOR`) with no Python
    values; the summary sentence names the winners (the players of the result in force) or says why
    the game has no result; seats whose colours come close in grayscale carry distinct marks."""
    tournament, stream, _ = pages[game]
    for report in [game_report_path(tournament, s) for s in _streams(tournament.parent.parent / "ledger", _tournament_id(tournament))]:
        page = _open(browser, report, width=PHONE)
        assert _overflow(page) <= 0, f"{report.name} is {_overflow(page)} px wider than a phone"
        said = _text(page, "#verdict, table.result, table.findings")
        assert _cjk_share(said) >= CJK_FLOOR, f"{report.name}: {_cjk_share(said):.2f} of the letters are Chinese"
        assert not PYTHON_VALUES.search(_text(page, READ)), PYTHON_VALUES.search(_text(page, READ))
        replayed = replay_game(list(LogReader(tournament.parent.parent / "ledger").events(report_stream(report, tournament))))
        verdict = page.locator("#verdict").inner_text()
        if replayed.outcome is None:
            assert verdict.startswith("未终局") and "Not finished" in verdict
        elif replayed.outcome.winners:
            holders = {h.seat: h.holder for h in replayed.start.seats}
            assert all(holders[w] in verdict for w in replayed.outcome.winners) and "获胜" in verdict and re.search(r"\bwon\b", verdict)
        else:
            assert "无胜方" in verdict and "no winner" in verdict
        seats = len(replayed.start.seats)
        colours = [_relative_luminance(page.locator(f"table.legend .sw.c{s}").evaluate("e => getComputedStyle(e).backgroundColor"))
                   for s in range(seats)]
        marks = _seat_marks(page, game, seats)
        for a in range(seats):
            for b in range(a + 1, seats):
                lighter, darker = max(colours[a], colours[b]), min(colours[a], colours[b])
                assert (lighter + 0.05) / (darker + 0.05) >= 1.5 or marks[a] != marks[b], f"seats {a} and {b} look alike in grayscale"
        natural = float(page.locator("#viewer").get_attribute("width") or 0)
        assert page.locator("#viewer").bounding_box()["width"] >= natural - 1, "on a phone the board keeps its size (it scrolls)"
        page.screenshot(path=str(tmp_path / f"{report.stem}-phone.png"), full_page=False)
        page.close()
    page = _open(browser, tournament, width=PHONE)
    assert _overflow(page) <= 0, f"the tournament page is {_overflow(page)} px wider than a phone"
    head = _text(page, "h1, p.verdict, table.standings th, table.crosstable th, table.games th")
    assert _cjk_share(head) >= CJK_FLOOR and not PYTHON_VALUES.search(_text(page, READ))
    assert "after round 1 of 1" in page.locator("p.verdict").inner_text()
    columns = page.locator("table.standings tr").first.locator("th").all_inner_texts()
    for name in ("move_ms", "trimmed_ms"):
        if any(c.endswith(name) for c in columns):  # duplicate standings: durations as m:ss (issue 31 point 11)
            at = next(i for i, c in enumerate(columns) if c.endswith(name))
            cells = page.locator(f"table.standings tr td:nth-child({at + 1})").all_inner_texts()
            assert cells and all(re.fullmatch(r"\d+:\d\d(\.\d{3})?|–", c) for c in cells), cells
    page.close()


@pytest.mark.parametrize("game", list(GAMES))
def test_a_link_to_a_step_opens_on_its_board_on_a_phone(browser: Any, pages: dict[str, tuple[Path, str, int]], game: str) -> None:
    """Issue 31 points 9, 10: a permalink to a step (`report.html#s57`) opens a 390-px phone on the
    board at that step, not on its timeline row; on a phone the board does not stick over the
    timeline (it scrolls away with the page)."""
    report, seq = _game_report(pages, game)
    page = browser.new_page(viewport={"width": PHONE, "height": 844})
    page.goto(report.as_uri() + f"#s{seq}")
    page.wait_for_load_state("load")
    page.wait_for_function(f"document.querySelector('#s{seq}').classList.contains('on')")
    page.wait_for_timeout(100)
    box = page.locator("#viewer").bounding_box()
    assert box is not None and -1 <= box["y"] < 200, f"the board is at {box}"
    assert f"seq {seq}" in page.locator("#steplabel").inner_text()
    assert page.locator(".replay > .pane").evaluate("e => getComputedStyle(e).position") == "static"
    page.close()


def test_a_ruling_in_force_heads_the_summary(browser: Any, pages: dict[str, tuple[Path, str, int]]) -> None:
    """Issue 31 point 4, 13 (第十四条 (1), 第十九条): after an upheld appeal and the ruling that carried it
    out, the report's summary gives the result in force, the ruling and the appeal decision behind
    it, and the result of play beside it; the appeal shows with clock times, its window, the votes
    as a table, and whether the decision's signature verified."""
    tournament, _, _ = pages["checkers"]
    stream, ruling = RULED["checkers"]
    page = _open(browser, game_report_path(tournament, stream))
    verdict = page.locator("#verdict").inner_text()
    replayed = replay_game(list(LogReader(tournament.parent.parent / "ledger").events(stream)))
    winner = {h.seat: h.holder for h in replayed.start.seats}[1]
    assert verdict.startswith(f"生效结果：{winner}") and f"裁决 seq {ruling}" in verdict and "执行申诉决定" in verdict
    assert f"ruling seq {ruling}" in verdict and "Result in force" in verdict and "the result of play was" in verdict
    appeals = page.locator("table.appeals > tbody > tr")
    assert appeals.count() == 2
    row = appeals.nth(1).inner_text()
    assert "申诉成立 upheld" in row and "按时提出 filed in time" in row and "签名有效 signature verified" in row and "UTC" in row
    assert page.locator("table.appeals table.votes tr").count() == 3
    page.close()


def _tournament_id(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    return re.search(r"<code>([^<]+)</code>", text.split("<p class='verdict'>")[1]).group(1)  # type: ignore[union-attr]


def report_stream(report: Path, tournament: Path) -> str:
    """Returns the stream of a game report written beside `tournament`, from its page."""
    return re.search(r"<p><code>([^<]+)</code></p>", report.read_text(encoding="utf-8")).group(1)  # type: ignore[union-attr]
