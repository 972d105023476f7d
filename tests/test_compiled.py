"""The optional mypyc build of the game rule modules (setup.py, replay/_compiled.py): a stale build
falls back to the sources of its game only, MATCHLEDGER_NO_MYPYC=1 runs the sources, a game's
modules never mix builds, and the compiled modules give the same replays as their sources.

The tests that need a compiled build are skipped without one (`MATCHLEDGER_NO_MYPYC=1 pip install -e .`)."""

from __future__ import annotations

import hashlib
import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from replay import _compiled
from replay._compiled import MANIFEST, SourceFinder, sources_to_run

REPO = Path(__file__).resolve().parents[1]
GAMES = ("junqi", "paohuzi")


def _package(root: Path, name: str, modules: dict[str, str]) -> Path:
    """Writes a package of `modules` (name: source) under root with a manifest of their hashes."""
    package = root / name
    package.mkdir()
    lines = []
    for module, text in modules.items():
        (package / f"{module}.py").write_text(text, encoding="utf-8")
        lines.append(f"{hashlib.sha256(text.encode()).hexdigest()}  {module}.py\n")
    (package / MANIFEST).write_text("".join(lines), encoding="ascii")
    return package


def test_fresh_builds_run_compiled(tmp_path: Path) -> None:
    _package(tmp_path, "alpha", {"a": "A = 1\n", "b": "B = 2\n"})
    assert sources_to_run(tmp_path, "pkg", everywhere=False) == ({}, [])


def test_a_changed_source_sends_its_whole_game_to_the_sources(tmp_path: Path) -> None:
    alpha = _package(tmp_path, "alpha", {"a": "A = 1\n", "b": "B = 2\n"})
    _package(tmp_path, "beta", {"c": "C = 3\n"})
    (alpha / "b.py").write_text("B = 3\n", encoding="utf-8")
    sources, changed = sources_to_run(tmp_path, "pkg", everywhere=False)
    assert sources == {"pkg.alpha.a": alpha / "a.py", "pkg.alpha.b": alpha / "b.py"}
    assert changed == ["alpha/b.py"]


def test_a_deleted_source_counts_as_changed(tmp_path: Path) -> None:
    alpha = _package(tmp_path, "alpha", {"a": "A = 1\n", "b": "B = 2\n"})
    (alpha / "a.py").unlink()
    assert sources_to_run(tmp_path, "pkg", everywhere=False)[1] == ["alpha/a.py"]


def test_no_mypyc_runs_every_compiled_game_from_its_sources(tmp_path: Path) -> None:
    alpha = _package(tmp_path, "alpha", {"a": "A = 1\n"})
    beta = _package(tmp_path, "beta", {"c": "C = 3\n"})
    (tmp_path / "gamma").mkdir()  # never compiled: no manifest
    assert sources_to_run(tmp_path, "pkg", everywhere=True) == ({"pkg.alpha.a": alpha / "a.py", "pkg.beta.c": beta / "c.py"}, [])


def test_source_finder_finds_only_its_modules(tmp_path: Path) -> None:
    source = tmp_path / "a.py"
    source.write_text("A = 1\n", encoding="utf-8")
    finder = SourceFinder({"pkg.alpha.a": source})
    spec = finder.find_spec("pkg.alpha.a", None)
    assert spec is not None and spec.origin == str(source)
    assert finder.find_spec("pkg.alpha.b", None) is None


@pytest.mark.parametrize("game", GAMES)
def test_mypyc_did_not_reject_a_game(game: str) -> None:
    """A type error makes mypyc refuse a game's modules, and the build goes on without them: the
    other tests here would only skip, so the build's mark of the rejection fails this one."""
    rejected = REPO / "replay" / game / "compiled.rejected"
    assert not rejected.exists(), rejected.read_text(encoding="utf-8")


@pytest.mark.parametrize("game", GAMES)
def test_a_games_modules_come_from_one_build(game: str) -> None:
    """Compiled modules call each other natively: a game runs all compiled or all from its sources."""
    package = Path(_compiled.__file__).parent / game
    names = list(_compiled.compiled_sources(package))
    if not names:
        pytest.skip(f"replay/{game} is not compiled in place")
    modules = [importlib.import_module(f"replay.{game}.{name}") for name in names]
    assert len({(module.__file__ or "").endswith(".py") for module in modules}) == 1


def _compiled_games() -> list[str]:
    return [game for game in GAMES if (REPO / "replay" / game / MANIFEST).exists()]


def _run(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "MATCHLEDGER_NO_MYPYC"} | env
    return subprocess.run([sys.executable, "-W", "always", "-c", code], cwd=cwd, env=environment,
                          capture_output=True, text=True, check=True, timeout=600)


REPLAYS = """
import hashlib, random, sys
import msgspec
from replay.registry import SEATS, engine
from replay.run import replay_game
from schemas.common import GameStarted
from schemas.envelope import SeatHolder
from schemas.junqi import JunqiProfile
from schemas.paohuzi import PaohuziProfile

for game, profile in (("junqi", JunqiProfile()), ("paohuzi", PaohuziProfile())):
    eng = engine(game)
    start = GameStarted(stream="t1-g1", seq=0, ts=1_764_000_000_000, profile=profile, first=1, board="b1",
                        seats=[SeatHolder(seat=s, player=f"p{s}") for s in range(SEATS[game])])
    digest = hashlib.sha256()
    for seed in range(12):
        r = replay_game(eng.bot_game(start, random.Random(seed)))
        digest.update(msgspec.json.encode([r.events, r.facts, r.findings, r.outcome]))
    print(game, sys.modules[f"replay.{game}.fold"].__file__.endswith(".py"), digest.hexdigest())
"""


def _replays(**env: str) -> dict[str, tuple[bool, str]]:
    """Returns, per game, whether its rules ran from the sources and the digest of its replays."""
    lines = _run(REPLAYS, REPO, **env).stdout.splitlines()
    return {game: (source == "True", digest) for game, source, digest in (line.split() for line in lines)}


def test_compiled_and_source_replays_agree() -> None:
    """Bot games and their replays (events, facts, findings, outcomes) are identical both ways."""
    compiled = _compiled_games()
    if not compiled:
        pytest.skip("no game is compiled in place")
    built, sources = _replays(), _replays(MATCHLEDGER_NO_MYPYC="1")
    assert {game: source for game, (source, _) in built.items()} == {game: game not in compiled for game in GAMES}
    assert all(source for source, _ in sources.values())
    assert {game: digest for game, (_, digest) in built.items()} == {game: digest for game, (_, digest) in sources.items()}


def test_an_edit_after_the_build_runs_that_games_sources(tmp_path: Path) -> None:
    """In a copy of the tree, editing one compiled source makes its game import every compiled
    module from the sources, with a warning naming the file, while the other game stays compiled."""
    compiled = _compiled_games()
    if len(compiled) < 2:
        pytest.skip("needs both games compiled in place")
    for tree in ("replay", "schemas"):
        shutil.copytree(REPO / tree, tmp_path / tree, ignore=shutil.ignore_patterns("__pycache__"))
    for native in REPO.glob("matchledger_*__mypyc.*"):
        shutil.copy2(native, tmp_path)
    edited = tmp_path / "replay" / "junqi" / "pieces.py"
    edited.write_text(edited.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    result = _run("import replay.junqi.fold as j, replay.junqi.board as b, replay.paohuzi.fold as p\n"
                  "print(j.__file__, b.__file__, p.__file__)", tmp_path)
    junqi_fold, junqi_board, paohuzi_fold = result.stdout.split()
    assert junqi_fold.endswith("fold.py") and junqi_board.endswith("board.py")
    assert not paohuzi_fold.endswith(".py")
    assert all(path.startswith(str(tmp_path)) for path in (junqi_fold, junqi_board, paohuzi_fold))
    assert "replay/junqi/pieces.py changed since compiled" in result.stderr
