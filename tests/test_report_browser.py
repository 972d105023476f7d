"""The arbitration reports and the tournament page, checked in a real browser (issue 15, item 7):
headless Chromium (Debian's `chromium`, driven by Playwright without a browser download) opens the
report of a game of each kind, each with a planted illegal move, and the tournament page, and
checks what an arbiter needs: nothing wider than a 1,280-px screen, the legend, the board at a
finding with the refused move drawn dashed, Chinese text in a CJK font, a usable print layout.
Screenshots and PDFs are saved under each test's temporary directory.

Skips, saying why, only where Chromium or Playwright is not installed (.ci/run installs them)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ledger_support import cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("no chromium on PATH (apt-get install chromium fonts-noto-cjk; .ci/run does)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")

WIDTH = 1280
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


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str, int]]:
    """Per game: the tournament page written by `report --tournament`, the stream of the game with
    the planted illegal move, and that move's seq."""
    out: dict[str, tuple[Path, str, int]] = {}
    for game in GAMES:
        base = tmp_path_factory.mktemp(game)
        made = _simulate(base / "ledger", game)
        audit = json.loads(cli("audit", "--ledger", str(base / "ledger"), "--json").stdout)
        bad = next(f for f in audit["findings"] if f["severity"] == "error" and f["stream"] != made["tournament"])
        page = base / "site" / "tournament.html"
        page.parent.mkdir()
        result = cli("report", "--ledger", str(base / "ledger"), "--tournament", made["tournament"], "--out", str(page), "--json")
        assert result.exit_code == 0, result.output
        out[game] = (page, bad["stream"], bad["seq"])
    return out


def _open(browser: Any, path: Path, media: str = "screen") -> Any:
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
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
    from audit.tournament_report import game_report_path

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
    page.close()


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
