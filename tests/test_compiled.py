"""The optional mypyc build of the game rule modules (setup.py, replay/_compiled.py): a stale build
falls back to the sources of its game only, MATCHLEDGER_NO_MYPYC=1 runs the sources, a game's
modules never mix builds, and the compiled modules give the same replays as their sources; the
build records what it did, a run warns about a group it should have compiled and `--version`
names every accelerator; an editable rebuild keeps what did not change.

The tests that need a compiled build are skipped without one (`MATCHLEDGER_NO_MYPYC=1 pip install -e .`), and
fail instead under MATCHLEDGER_REQUIRE_COMPILED=1, as in CI."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from replay import _compiled
from replay._compiled import MANIFEST, GroupState, SourceFinder, group_states, partly_built, sources_to_run

REPO = Path(__file__).resolve().parents[1]
GAMES = ("junqi", "paohuzi")


def _without_compiled_build(reason: str) -> None:
    """Skips a test that needs the compiled build; fails it where the build must be there (CI sets
    MATCHLEDGER_REQUIRE_COMPILED=1, so a compile the build skipped cannot pass unseen)."""
    if os.environ.get("MATCHLEDGER_REQUIRE_COMPILED"):
        pytest.fail(f"{reason}, and MATCHLEDGER_REQUIRE_COMPILED is set (`matchledger --version` says why)")
    pytest.skip(reason)


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
        _without_compiled_build(f"replay/{game} is not compiled in place")
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
        _without_compiled_build("no game is compiled in place")
    built, sources = _replays(), _replays(MATCHLEDGER_NO_MYPYC="1")
    assert {game: source for game, (source, _) in built.items()} == {game: game not in compiled for game in GAMES}
    assert all(source for source, _ in sources.values())
    assert {game: digest for game, (_, digest) in built.items()} == {game: digest for game, (_, digest) in sources.items()}


def test_an_edit_after_the_build_runs_that_games_sources(tmp_path: Path) -> None:
    """In a copy of the tree, editing one compiled source makes its game import every compiled
    module from the sources, with a warning naming the file, while the other game stays compiled."""
    compiled = _compiled_games()
    if len(compiled) < 2:
        _without_compiled_build("needs both games compiled in place")
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


# -- what the build recorded, and what a run says about it (issue 32, goal 5) ----------------------

def _record(root: Path, mypyc: bool, **groups: str) -> None:
    """Writes a build record for games `alpha`…, each in the given state, with module `a`."""
    record = {"mypyc": mypyc, "c": {}, "groups": {game: {"state": state, "why": "no mypyc (ImportError())", "modules": ["a"]}
                                                  for game, state in groups.items()}}
    (root / _compiled.RECORD).write_text(json.dumps(record), encoding="utf-8")


def _build(package: Path, module: str = "a") -> None:
    """Puts a (fake) compiled build of `module` beside its source."""
    (package / f"{module}{EXTENSION_SUFFIXES[0]}").write_bytes(b"")


def test_a_group_the_build_compiled_runs_compiled(tmp_path: Path) -> None:
    _build(_package(tmp_path, "alpha", {"a": "A = 1\n"}))
    _record(tmp_path, True, alpha="compiled")
    assert group_states(tmp_path, "pkg", {}, [], everywhere=False) == [GroupState("alpha", True)]


def test_a_compiled_group_gone_missing_is_reported(tmp_path: Path) -> None:
    """Issue 32 goal 5: an install ended without its compiled engines and nothing said so; a group the
    build compiled (MATCHLEDGER_NO_MYPYC unset) but whose files are gone is `missing`, with why."""
    _package(tmp_path, "alpha", {"a": "A = 1\n"})
    _record(tmp_path, True, alpha="compiled")
    [state] = group_states(tmp_path, "pkg", {}, [], everywhere=False)
    assert not state.compiled and state.missing and "files are missing" in state.why


def test_a_group_the_build_skipped_is_reported_with_the_builds_reason(tmp_path: Path) -> None:
    """Issue 32 goal 5: a compile the build skipped (pip -q hid its warning) is `missing`, with setup.py's reason."""
    _package(tmp_path, "alpha", {"a": "A = 1\n"})
    _record(tmp_path, True, alpha="skipped")
    [state] = group_states(tmp_path, "pkg", {}, [], everywhere=False)
    assert state == GroupState("alpha", False, "构建时跳过 skipped by the build: no mypyc (ImportError())", missing=True)


def test_a_group_that_lost_one_compiled_file_runs_all_from_its_sources(tmp_path: Path) -> None:
    """Compiled modules call each other natively: with one file of a game's build gone, every module
    of that game imports from its source (not a mix), and the group is reported missing."""
    alpha = _package(tmp_path, "alpha", {"a": "A = 1\n", "b": "B = 2\n"})
    beta = _package(tmp_path, "beta", {"c": "C = 3\n"})
    _build(alpha, "a")
    _build(beta, "c")
    record = {"mypyc": True, "c": {}, "groups": {"alpha": {"state": "compiled", "modules": ["a", "b"]},
                                                 "beta": {"state": "compiled", "modules": ["c"]}}}
    (tmp_path / _compiled.RECORD).write_text(json.dumps(record), encoding="utf-8")
    sources = partly_built(tmp_path, "pkg")
    assert sources == {"pkg.alpha.a": alpha / "a.py", "pkg.alpha.b": alpha / "b.py"}
    assert [(s.game, s.compiled, s.missing) for s in group_states(tmp_path, "pkg", sources, [], everywhere=False)] == [
        ("alpha", False, True), ("beta", True, False)]


def test_a_build_without_mypyc_on_purpose_is_not_a_fault(tmp_path: Path) -> None:
    _package(tmp_path, "alpha", {"a": "A = 1\n"})
    _record(tmp_path, False, alpha="off")
    [state] = group_states(tmp_path, "pkg", {}, [], everywhere=False)
    assert not state.compiled and not state.missing and "MATCHLEDGER_NO_MYPYC was set at build time" in state.why


def test_a_stale_or_switched_off_build_says_why_its_sources_run(tmp_path: Path) -> None:
    alpha = _package(tmp_path, "alpha", {"a": "A = 1\n"})
    _build(alpha)
    _record(tmp_path, True, alpha="compiled")
    (alpha / "a.py").write_text("A = 2\n", encoding="utf-8")
    sources, changed = sources_to_run(tmp_path, "pkg", everywhere=False)
    [stale] = group_states(tmp_path, "pkg", sources, changed, everywhere=False)
    assert not stale.compiled and not stale.missing and "alpha/a.py" in stale.why
    sources, changed = sources_to_run(tmp_path, "pkg", everywhere=True)
    [off] = group_states(tmp_path, "pkg", sources, changed, everywhere=True)
    assert not off.compiled and "MATCHLEDGER_NO_MYPYC set at run time" in off.why


def _tree(tmp_path: Path) -> Path:
    """Copies what setup.py builds from (no compiled file) into tmp_path."""
    for tree in ("replay", "schemas"):
        shutil.copytree(REPO / tree, tmp_path / tree, ignore=shutil.ignore_patterns("__pycache__", "*.so", "compiled.*"))
    for source in ("setup.py", "ledger/_fastscan.c", "audit/query/_jsonsplit.c"):
        (tmp_path / source).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / source, tmp_path / source)
    return tmp_path


def _setup(tree: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Runs setup.py in `tree` where mypyc cannot be imported (as on a machine without it); args empty:
    prints, instead, each group's build inputs (their digest) and modules."""
    main = "setup_module = {}; exec(open('setup.py').read(), setup_module)"
    if not args:
        main = ("import setuptools, json; setuptools.setup = lambda **kw: None; " + main +
                "; print(json.dumps({g.game: [g.inputs(), g.modules] for g in setup_module['GROUPS']}))")
    code = f"import sys; sys.modules['mypyc'] = sys.modules['mypyc.build'] = None; sys.argv = ['setup.py', *{list(args)!r}]; {main}"
    environment = {k: v for k, v in os.environ.items() if k != "MATCHLEDGER_NO_MYPYC"} | env
    # a new session has no terminal, so the build's messages stay in stderr and off the tester's screen
    return subprocess.run([sys.executable, "-c", code], cwd=tree, env=environment, capture_output=True, text=True, check=True, timeout=600,
                          start_new_session=True)


def test_a_build_that_skips_a_group_is_reported_by_the_first_run(tmp_path: Path) -> None:
    """Issue 32 goal 5: with mypyc missing the build skips both games; its record says so, and the
    first import of the rules warns on stderr (pip -q shows nothing of the build), naming `--version`;
    a build with MATCHLEDGER_NO_MYPYC=1 is silent."""
    tree = _tree(tmp_path)
    _setup(tree, "build_ext", "--inplace")
    record = json.loads((tree / "replay" / "compiled.json").read_text(encoding="utf-8"))
    assert record["mypyc"] is True and {game: group["state"] for game, group in record["groups"].items()} == dict.fromkeys(GAMES, "skipped")
    run = subprocess.run([sys.executable, "-c", "import replay.junqi, replay.paohuzi"], cwd=tree, capture_output=True, text=True, check=True,
                         env={k: v for k, v in os.environ.items() if k != "MATCHLEDGER_NO_MYPYC"})
    assert run.stderr.count("rules run as pure Python") == 2 and "no mypyc" in run.stderr and "matchledger --version" in run.stderr
    _setup(tree, "build_ext", "--inplace", MATCHLEDGER_NO_MYPYC="1")
    assert json.loads((tree / "replay" / "compiled.json").read_text(encoding="utf-8"))["mypyc"] is False
    quiet = subprocess.run([sys.executable, "-c", "import replay.junqi, replay.paohuzi"], cwd=tree, capture_output=True, text=True, check=True)
    assert quiet.stderr == ""


def test_an_editable_rebuild_keeps_a_group_nothing_of_which_changed(tmp_path: Path) -> None:
    """Issue 32 goal 6: the test command after the first one does not compile the games again; a
    group whose sources (or schemas/) changed since is built anew (here: skipped, mypyc being absent)."""
    tree = _tree(tmp_path)
    groups = json.loads(_setup(tree).stdout)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    built = {game: [tree / f"matchledger_{game}__mypyc{suffix}", *(tree / "replay" / game / f"{m}{suffix}" for m in modules)]
             for game, (_, modules) in groups.items()}
    for file in (file for files in built.values() for file in files):
        file.write_bytes(b"")  # stands for the compiled build of an earlier install
    (tree / "replay" / "compiled.json").write_text(json.dumps({"mypyc": True, "c": {}, "groups": {
        game: {"state": "compiled", "inputs": inputs, "modules": modules} for game, (inputs, modules) in groups.items()}}))
    edited = tree / "replay" / "junqi" / "pieces.py"
    edited.write_text(edited.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    result = _setup(tree, "build_ext", "--inplace")
    assert "paohuzi: 已编译且未改动 compiled and unchanged since the last build, kept" in result.stderr
    assert all(file.exists() for file in built["paohuzi"]) and not any(file.exists() for file in built["junqi"])
    after = json.loads((tree / "replay" / "compiled.json").read_text(encoding="utf-8"))["groups"]
    assert after["paohuzi"]["state"] == "compiled" and after["paohuzi"]["inputs"] == groups["paohuzi"][0]
    assert after["junqi"]["state"] == "skipped"


def test_version_names_each_accelerator_and_why_one_is_not_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32 goal 5: `matchledger --version` names the C scanner, the JSON splitter and each game's
    mypyc build, in use or not, and why not."""
    from audit.query.accelerators import accelerators
    from tests.ledger_support import cli

    monkeypatch.setattr(_compiled, "STATES", [GroupState("junqi", True), GroupState("paohuzi", False, "构建时跳过 skipped by the build: x", True)])
    lines = cli("--version").stdout.splitlines()
    assert lines[1] == "加速模块 accelerators:"
    assert lines[2:] == [f"  {a.line()}" for a in accelerators()]
    assert [line.split(" (")[0].strip() for line in lines[2:]] == ["ledger._fastscan", "audit.query._jsonsplit", "replay.junqi", "replay.paohuzi"]
    assert lines[4].endswith("使用中 in use") and lines[5].endswith("未使用 not in use: 构建时跳过 skipped by the build: x")
