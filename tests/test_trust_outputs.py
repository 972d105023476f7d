"""Issue 28 point 11, outputs through planted links: an export with `--force` into a directory
someone else can write never follows a link planted in it (threat: a careless operator's output
flag turned against the ledger, DESIGN.md "no output option writes inside a ledger directory"),
and per-stream output names never collide. Each attack is replayed and the ledger's files are
hashed before and after."""

from __future__ import annotations

import json
import os
import urllib.parse
from pathlib import Path

import pytest

from audit.lake.export import MANIFEST, load_parquet
from ledger import Verifier
from ledger.outputs import OutputRefused, output_directory, stream_file_name
from tests.ledger_support import cli, snapshot


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulated checkers game, and two games of tournament `cup` in streams `cup/a/b` and `cup/a_b`."""
    base = tmp_path_factory.mktemp("outputs")
    root = base / "L"
    assert cli("simulate", "checkers", "--games", "1", "--ledger", str(root)).exit_code == 0
    assert cli("export", "--ledger", str(root), "--jsonl", str(base / "e.jsonl")).exit_code == 0
    game = [json.loads(line) for line in (base / "e.jsonl").read_text().splitlines()]
    lines = []
    for stream in ("cup/a/b", "cup/a_b"):
        for event in game:
            if event["stream"] == "sim-checkers-1-g1":
                lines.append(json.dumps({**event, "stream": stream, **({"tournament": "cup"} if event["kind"] == "game.started" else {})}))
    (base / "cup.jsonl").write_text("\n".join(lines) + "\n")
    assert cli("record", str(base / "cup.jsonl"), "--ledger", str(root)).exit_code == 0
    return root


def plant(out: Path, links: dict[str, Path]) -> None:
    """Replaces each named path of an output directory by a symbolic link to a ledger's file or directory."""
    for name, target in links.items():
        path = out / name
        if path.is_dir() and not path.is_symlink():
            for inner in sorted(path.rglob("*"), reverse=True):
                inner.rmdir() if inner.is_dir() else inner.unlink()
            path.rmdir()
        elif path.exists() or path.is_symlink():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)


def links_in(out: Path) -> list[str]:
    return [str(Path(d, n).relative_to(out)) for d, dirs, files in os.walk(out) for n in dirs + files if Path(d, n).is_symlink()]


def test_parquet_force_never_writes_through_planted_links(ledger: Path, tmp_path: Path) -> None:
    """`export --parquet DIR --force` over a directory with `schema.json`, `trino.sql` and
    `manifest.json` linked to the ledger's files and a table directory (`players/`) linked to its
    `segments/`: the ledger is unchanged, the export is whole, signed and has no link left."""
    out = tmp_path / "lake"
    assert cli("export", "--ledger", str(ledger), "--parquet", str(out)).exit_code == 0
    plant(out, {"schema.json": ledger / "ledger.json", "trino.sql": ledger / "signer.pub", MANIFEST: ledger / "checkpoint",
                "players": ledger / "segments", "games/tournament=none": ledger / "tile"})
    before = snapshot(ledger)
    result = cli("export", "--ledger", str(ledger), "--parquet", str(out), "--force")
    assert result.exit_code == 0, result.output
    assert snapshot(ledger) == before
    assert links_in(out) == []
    assert set(load_parquet(out, Verifier.load(ledger / "signer.pub"))) >= {"players", "games"}
    assert [p.name for p in tmp_path.iterdir()] == ["lake"], "no temporary or old directory left beside it"


def test_tiles_force_never_writes_through_planted_links(ledger: Path, tmp_path: Path) -> None:
    """`export --tiles DIR --force` over a directory with `checkpoint` linked to `ledger.json` and
    `tile/entries` linked to the ledger's `segments/`: the ledger is unchanged, the export's
    checkpoint is the log's note."""
    out = tmp_path / "tiles"
    assert cli("export", "--ledger", str(ledger), "--tiles", str(out)).exit_code == 0
    plant(out, {"checkpoint": ledger / "ledger.json", "tile/entries": ledger / "segments", "tile/0": ledger / "tile" / "0"})
    before = snapshot(ledger)
    result = cli("export", "--ledger", str(ledger), "--tiles", str(out), "--force")
    assert result.exit_code == 0, result.output
    assert snapshot(ledger) == before
    assert links_in(out) == []
    assert (out / "checkpoint").read_bytes() == (ledger / "checkpoint").read_bytes()
    assert (out / "tile" / "entries").is_dir() and any((out / "tile" / "entries").iterdir())


def test_records_force_never_writes_through_planted_links(ledger: Path, tmp_path: Path) -> None:
    """`export --format record --tournament cup --out DIR --force` over a directory whose record
    files are links to the ledger's `ledger.json` and `signer.pub`: the ledger is unchanged."""
    out = tmp_path / "records"
    assert cli("export", "--ledger", str(ledger), "--tournament", "cup", "--format", "record", "--out", str(out)).exit_code == 0
    plant(out, {"cup_a_b.txt": ledger / "ledger.json", "cup_a%5Fb.txt": ledger / "signer.pub"})
    before = snapshot(ledger)
    result = cli("export", "--ledger", str(ledger), "--tournament", "cup", "--format", "record", "--out", str(out), "--force")
    assert result.exit_code == 0, result.output
    assert snapshot(ledger) == before
    assert links_in(out) == []


def test_streams_a_slash_b_and_a_underscore_b_get_two_records(ledger: Path, tmp_path: Path) -> None:
    """Per-stream file names are injective: `cup/a/b` and `cup/a_b` are two files, each its own game's record."""
    out = tmp_path / "records"
    result = cli("export", "--ledger", str(ledger), "--tournament", "cup", "--format", "record", "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["games"] == 2
    assert sorted(p.name for p in out.iterdir()) == ["cup_a%5Fb.txt", "cup_a_b.txt"]
    assert '[Stream "cup/a/b"]' in (out / "cup_a_b.txt").read_text()
    assert '[Stream "cup/a_b"]' in (out / "cup_a%5Fb.txt").read_text()


def test_stream_file_names_are_injective_and_plain() -> None:
    """No two streams share a file name; a name holds no `/` and does not start with a dot (`..`, hidden files)."""
    streams = ["a/b", "a_b", "a%5Fb", "a%2Fb", "a__b", "a/_b", "a_/b", "..", ".x", "a/../b", "é", "e\u0301", "a b", "a\nb"]
    names = [stream_file_name(s, ".txt") for s in streams]
    assert len(set(names)) == len(streams), names
    assert all("/" not in n and not n.startswith(".") and n.isprintable() and " " not in n for n in names), names


def test_a_failed_output_leaves_nothing_and_a_link_is_refused(tmp_path: Path) -> None:
    """An output that fails half-way leaves no directory (nor its temporary one); a relative path
    climbing out of the output is refused; the target itself being a link is refused."""
    with pytest.raises(RuntimeError), output_directory(tmp_path / "out") as tree:
        tree.write("a/b.txt", b"half")
        raise RuntimeError("failed half-way")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(OutputRefused, match="not a plain relative path"), output_directory(tmp_path / "out") as tree:
        tree.write("../escaped", b"x")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(OutputRefused, match="symbolic link"), output_directory(tmp_path / "link", force=True):
        pass


def test_game_reports_of_two_streams_never_share_a_file() -> None:
    """Issue 28.11: the tournament page's game reports are named as every per-stream output (`a/b`
    and `a_b` apart), and the page links to the name as written (its `%XX` escaped for the URL)."""
    from audit.presentation.tournament_report import _link, game_report_path

    page = Path("/tmp/out/cup.html")
    one, two = game_report_path(page, "cup/a/b"), game_report_path(page, "cup/a_b")
    assert one != two and one.parent == two.parent == page.parent
    assert urllib.parse.unquote(_link(two)) == two.name and "%255F" in _link(two)
