"""Issue 28, points 4, 5, 6 and 12: the trust anchor is a pinned key, not a file the insider can
write, and no reader shows what the signed tree does not give.

Each test replays an attack by an insider who can write the ledger's files (and put their own key
there) but holds no copy of the genuine `signer.key`, or by a careless operator, and shows it
refused or reported, with the standings as the genuine log gives them.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import msgspec
import pyarrow as pa
import pytest

import audit.query.projection_cache as cache
from audit.live.auditor import LiveFinding
from audit.live.store import FINDINGS, LiveStore
from audit.query.db import AuditDB
from audit.query.projection import Projection, project
from ledger import LedgerCorrupt, LogReader, Signer
from ledger.derived import DerivedFiles
from ledger.layout import PRIVATE_KEY, PUBLIC_KEY
from ledger.notes import sign_note, split_note
from ledger.segments import frame, iter_frames, list_segments
from tests.ledger_support import cli, event_line, flat

TOURNAMENT = "junqi-cup-1"


@pytest.fixture(scope="module")
def season(simulated_season: Callable[..., Path]) -> Path:
    """A Junqi tournament of 2 rounds (`root` and `genuine` in tests/conftest.py copy it and its key)."""
    return simulated_season("anchor", "junqi", "--tournament", "--players", "4", "--rounds", "2", "--games-per-round", "1")


def _standings(root: Path, *more: str) -> dict:
    result = cli("standings", "--ledger", str(root), "--tournament", TOURNAMENT, "--json", "--quiet", *more)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _insider(root: Path) -> Signer:
    """Returns a key the insider made under the log's name."""
    return Signer.generate(Signer.load(root / PRIVATE_KEY).name)


def _resign_notes(root: Path, insider: Signer) -> None:
    """Re-signs every checkpoint note (and the served one) with the insider's key."""
    for path in [*sorted((root / "checkpoints").glob("*.note")), root / "checkpoint"]:
        body, _ = split_note(path.read_text())
        path.write_text(sign_note(body, insider))


def _install(root: Path, insider: Signer, private: bool) -> None:
    """Puts the insider's public key (and, with `private`, their private key) in the ledger directory."""
    (root / PUBLIC_KEY).write_text(str(insider.verifier) + "\n")
    (root / PRIVATE_KEY).unlink()
    if private:
        insider.save(root / PRIVATE_KEY)


def _forge_projection(root: Path, signer: Signer) -> None:
    """Keeps a projection of this very log in which every game's winners are swapped, signed by `signer`."""
    files = DerivedFiles(root, cache.NAME)
    log = LogReader(root).packed()
    signed, tree = cache._checked(root, log)
    projection = project(log)
    tables = dict(projection.tables())
    games = tables["games"]
    kind = games.schema.field("derived_winners").type
    swapped = pa.array([[1 - w % 2 + 2 * (w // 2) for w in ws] for ws in games["derived_winners"].to_pylist()], kind)
    tables["games"] = games.set_column(games.schema.get_field_index("derived_winners"), "derived_winners", swapped)
    tables["games"] = tables["games"].set_column(games.schema.get_field_index("winners"), "winners", swapped)
    forged = Projection(tables, findings=projection.findings, tournament_events=projection.tournament_events, places=projection.places)
    db = AuditDB(forged.tables())
    original = cache.load_signer
    cache.load_signer = lambda _root: signer  # type: ignore[assignment]
    try:
        cache.keep(files, root, forged, db.built_tables(), signed, tree, log)
    finally:
        cache.load_signer = original  # type: ignore[assignment]


def _winners(root: Path) -> list[list[int]]:
    """Returns every game's derived winners as a projection built from the log gives them."""
    from audit.query.projection import project_ledger

    return project_ledger(root).tables()["games"].sort_by("entry")["derived_winners"].to_pylist()


def _edit_ts(root: Path, stream: str, seq: int) -> int:
    """Changes the last digit of the timestamp of one event of a stream; returns its entry."""
    first, path = list_segments(root / "segments")[0]
    for _, _, payload, _ in iter_frames(path.read_bytes(), first):
        event = json.loads(payload.tobytes())
        if (event["stream"], event["seq"]) == (stream, seq):
            ts = str(event["ts"]).encode()
            edited = ts[:-1] + str((int(ts[-1:]) + 1) % 10).encode()
            return _edit_entry(root, b'"ts":' + ts, b'"ts":' + edited)
    raise AssertionError("no such event")


def _edit_entry(root: Path, needle: bytes, replacement: bytes) -> int:
    """Rewrites the first signed entry holding `needle` (same length, a valid frame and CRC); returns its index."""
    assert len(needle) == len(replacement)
    first, path = list_segments(root / "segments")[0]
    data = path.read_bytes()
    for index, offset, payload, commit in iter_frames(data, first):
        if needle in payload.tobytes():
            old = frame(index, payload.tobytes(), commit)
            assert data[offset:offset + len(old)] == old
            path.write_bytes(data[:offset] + frame(index, payload.tobytes().replace(needle, replacement, 1), commit) + data[offset + len(old):])
            return index
    raise AssertionError("no such entry")


# -- 28.4: the trust anchor ---------------------------------------------------------------------------------------


def test_swapped_signer_pub_is_refused_where_signer_key_is_readable(root: Path) -> None:
    """28.4: signer.pub swapped and every note re-signed by the insider; the operator's own signer.key
    shows the swap, so verify, audit and standings refuse (exit 1) instead of trusting the file."""
    insider = _insider(root)
    _resign_notes(root, insider)
    (root / PUBLIC_KEY).write_text(str(insider.verifier) + "\n")
    for args in (["verify"], ["audit", "--quiet"], ["standings", "--tournament", TOURNAMENT, "--quiet"]):
        result = cli(*args, "--ledger", str(root))
        assert result.exit_code == 1, (args, result.output)
        assert "is not the public key of" in flat(result.output), result.output


def test_insider_key_pair_passes_only_unpinned_and_the_output_says_so(root: Path, genuine: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """28.4: the insider replaces both key files and re-signs every note: unpinned, verify passes but
    says (text and JSON) that the key came from the directory; pinned by --key or MATCHLEDGER_LOG_KEY,
    every reader refuses."""
    insider = _insider(root)
    _resign_notes(root, insider)
    _install(root, insider, private=True)
    unpinned = cli("verify", "--ledger", str(root), "--json")
    assert unpinned.exit_code == 0, unpinned.output
    trust = json.loads(unpinned.stdout)["trust"]
    assert trust["key"]["pinned"] is False and trust["key"]["from"] == str(root / PUBLIC_KEY)
    assert "unpinned" in flat(cli("verify", "--ledger", str(root)).output)
    for args in (["verify"], ["audit", "--quiet"], ["standings", "--tournament", TOURNAMENT, "--quiet"], ["query", "SELECT 1"],
                 ["replay", "--quiet"], ["show", "--game", f"{TOURNAMENT}/r1/t1/g1"], ["appeals", "--quiet"]):
        result = cli(*args, "--ledger", str(root), "--key", genuine)
        assert result.exit_code == 1, (args, result.output)
        assert "is not the pinned key" in flat(result.output), (args, result.output)
    monkeypatch.setenv("MATCHLEDGER_LOG_KEY", genuine)
    pinned = cli("verify", "--ledger", str(root))
    assert pinned.exit_code == 1 and "is not the pinned key" in flat(pinned.output)


def test_pinned_readers_say_the_key_and_the_size_they_verified_to(root: Path, genuine: str) -> None:
    """28.4/28.6: a pinned reader says so, and every reader says the signed size it verified to (text and JSON)."""
    size = LogReader(root).signed().size
    doc = _standings(root, "--key", genuine)
    assert doc["trust"]["key"]["pinned"] is True and doc["trust"]["verified_size"] == size
    for args in (["replay", "--format", "json"], ["show", "--game", f"{TOURNAMENT}/r1/t1/g1", "--json"], ["query", "SELECT 1", "--json"]):
        result = cli(*args, "--ledger", str(root), "--key", genuine)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["trust"]["verified_size"] <= size, args
    text = cli("standings", "--ledger", str(root), "--tournament", TOURNAMENT, "--key", genuine, "--quiet")
    assert f"verified against the signed checkpoint of size {size}" in flat(text.output) and "pinned" in text.output


def test_forged_kept_projection_signed_by_the_insider_is_not_used(root: Path, genuine: str) -> None:
    """28.4: a kept projection with every winner swapped, signed by an insider key: shown only when the
    insider's key is trusted unpinned (and then the output says unpinned); under the genuine key it
    is refused and the standings are those of the log."""
    honest = _standings(root, "--key", genuine)["rows"]
    insider = _insider(root)
    _forge_projection(root, insider)
    assert _standings(root, "--key", genuine)["rows"] == honest  # the forged state is refused and rebuilt
    _forge_projection(root, insider)
    sql = "SELECT derived_winners FROM games ORDER BY entry"
    winners = cli("query", "--ledger", str(root), "--key", genuine, sql, "--json")
    assert json.loads(winners.stdout)["rows"] == [[w] for w in _winners(root)]
    _forge_projection(root, insider)
    saved = {name: (root / name).read_bytes() for name in (PUBLIC_KEY, PRIVATE_KEY)}
    _resign_notes(root, insider)
    _install(root, insider, private=False)
    fooled = _standings(root)
    assert fooled["rows"] != honest and fooled["trust"]["key"]["pinned"] is False  # the attack, when nothing is pinned
    assert cli("standings", "--ledger", str(root), "--tournament", TOURNAMENT, "--key", genuine).exit_code == 1
    for name, data in saved.items():
        (root / name).write_bytes(data)


def test_changed_settings_are_refused_by_verify(root: Path) -> None:
    """28.4: ledger.json must hash to the settings digest every checkpoint note signs."""
    config = root / "ledger.json"
    config.write_text(config.read_text().replace('"checkpoint_interval": 100000', '"checkpoint_interval": 100001'))
    result = cli("verify", "--ledger", str(root))
    assert result.exit_code == 1 and "ledger.json was changed after checkpoint" in flat(result.output), result.output


def test_an_older_note_served_as_checkpoint_is_reported(root: Path) -> None:
    """28.4: the `checkpoint` file rolled back to an older note is reported by verify."""
    notes = sorted((root / "checkpoints").glob("*.note"))
    shutil.copy(notes[1], root / "checkpoint")
    result = cli("verify", "--ledger", str(root), "--json")
    doc = json.loads(result.stdout)
    newest = int(notes[-1].stem)
    assert result.exit_code == 0 and doc["size"] == newest, doc
    assert any(f"serves size {int(notes[1].stem)}, older than the newest note ({newest})" in n for n in doc["notes"]), doc


# -- 28.6: readers check the signed range ---------------------------------------------------------------------------


def test_an_entry_edited_in_the_signed_range_is_refused_by_every_reader(root: Path, genuine: str) -> None:
    """28.6: one entry of a game rewritten with a valid frame: standings, query, replay, show, report and
    appeals refuse it (exit 1, naming the entry) instead of showing the edited result, whether the
    projection is built or was kept before the edit."""
    kept = _standings(root, "--key", genuine)  # a projection is kept for the log as it was
    game = f"{TOURNAMENT}/r1/t1/g1"
    entry = _edit_ts(root, game, 3)
    assert cli("verify", "--ledger", str(root)).exit_code == 1 and entry > 0  # what audit rejects …
    # issue 32.2: standings, query and appeals at the kept checkpoint read no kept entry again: they show
    # the projection of the signed bytes (checked when kept), never the edited ones
    assert _standings(root, "--key", genuine)["rows"] == kept["rows"]
    for args in (["query", "SELECT count(*) FROM events WHERE body IS NOT NULL"], ["replay", "--quiet"],
                 ["replay", "--game", game, "--quiet"], ["show", "--game", game],
                 ["report", "--game", game, "--out", str(root.parent / "r.html")],
                 ["report", "--tournament", TOURNAMENT, "--out", str(root.parent / "r.html"), "--quiet"]):
        result = cli(*args, "--ledger", str(root), "--key", genuine)
        assert result.exit_code == 1, (args, result.output)
        assert "the signed range was changed" in flat(result.output) or "does not match the signed tree" in flat(result.output), \
            (args, result.output)
    assert not (root.parent / "r.html").exists()


# -- 28.5: the export is of the log, and says which checkpoint --------------------------------------------------------


def test_a_forged_kept_projection_is_not_laundered_into_a_signed_export(root: Path, genuine: str, tmp_path: Path) -> None:
    """28.5: with signer.pub swapped and the kept projection forged, `export --parquet` refuses; with the
    forged projection alone, the export is derived from the log and its tables are the log's."""
    honest = _standings(root, "--key", genuine)["rows"]
    insider = _insider(root)
    _forge_projection(root, insider)
    (root / PUBLIC_KEY).write_text(str(insider.verifier) + "\n")
    refused = cli("export", "--ledger", str(root), "--parquet", str(tmp_path / "x"), "--quiet")
    assert refused.exit_code == 1 and "is not the public key of" in flat(refused.output), refused.output
    shutil.copy(genuine, root / PUBLIC_KEY)
    made = cli("export", "--ledger", str(root), "--parquet", str(tmp_path / "out"), "--quiet", "--json")
    assert made.exit_code == 0, made.output
    ranked = cli("standings", "--engine", "duckdb", "--ledger", str(root), "--tournament", TOURNAMENT, "--json", "--key", genuine)
    assert json.loads(ranked.stdout)["rows"] == honest
    games = cli("query", "--parquet", str(tmp_path / "out"), "--key", genuine, "SELECT derived_winners FROM games ORDER BY entry", "--json")
    log = cli("query", "--ledger", str(root), "--key", genuine, "SELECT derived_winners FROM games ORDER BY entry", "--json")
    assert json.loads(games.stdout)["rows"] == json.loads(log.stdout)["rows"]


def test_query_parquet_says_which_checkpoint_and_checks_the_events_tree(root: Path, genuine: str, tmp_path: Path) -> None:
    """28.5/28.12: `query --parquet` names the checkpoint the export is of (an older export says its
    older size) and refuses an export whose `events` are not the signed tree's, even under a valid
    manifest signature."""
    out = tmp_path / "old"
    assert cli("export", "--ledger", str(root), "--parquet", str(out), "--quiet").exit_code == 0
    size = LogReader(root).signed().size
    (tmp_path / "more.jsonl").write_bytes(event_line("later-stream", 0) + b"\n")
    assert cli("record", str(tmp_path / "more.jsonl"), "--ledger", str(root)).exit_code == 0
    assert LogReader(root).signed().size == size + 1  # the export is now of an older checkpoint
    listed = cli("query", "--parquet", str(out), "--key", genuine, "SELECT count(*) AS n FROM events", "--json")
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.stdout)["trust"]["verified_size"] == size
    assert f"size {size}" in flat(cli("query", "--parquet", str(out), "--key", genuine, "SELECT 1").output)
    _relaunder_events(out, Signer.load(root / PRIVATE_KEY))
    refused = cli("query", "--parquet", str(out), "--key", genuine, "SELECT 1")
    assert refused.exit_code == 1 and "not the signed log's" in flat(refused.output), refused.output


def _relaunder_events(out: Path, signer: Signer) -> None:
    """Changes one `events` body in the export and signs a manifest over it with the log's key, as a
    buggy or careless export would."""
    import pyarrow.parquet as pq

    from audit.lake.export import MANIFEST, MANIFEST_FORMAT, MANIFEST_NOTE

    manifest = json.loads((out / MANIFEST).read_text())
    item = next(f for f in manifest["files"] if f["path"].startswith("events/") and f["rows"])
    table = pq.read_table(out / item["path"])
    bodies = table["body"].to_pylist()
    bodies[0] = bodies[0].replace('"seq":0', '"seq":0 ')
    table = table.set_column(table.schema.get_field_index("body"), "body", pa.array(bodies, table.schema.field("body").type))
    pq.write_table(table, out / item["path"])
    item["sha256"] = hashlib.sha256((out / item["path"]).read_bytes()).hexdigest()
    data = msgspec.json.format(msgspec.json.encode(manifest)) + b"\n"
    (out / MANIFEST).write_bytes(data)
    (out / MANIFEST_NOTE).write_text(sign_note(f"{signer.name}\n{MANIFEST_FORMAT}\nsha256 {hashlib.sha256(data).hexdigest()}\n", signer))


# -- 28.12: cosign order, live findings ---------------------------------------------------------------------------------


def test_cosign_refuses_a_forged_note_before_signing_it(root: Path, tmp_path: Path) -> None:
    """28.12: an insider re-signs a kept note with their key; the arbiter's cosign checks the log's
    signature first and refuses, leaving the note unsigned by the arbiter."""
    note = sorted((root / "checkpoints").glob("*.note"))[1]
    body, _ = split_note(note.read_text())
    note.write_text(sign_note(body, _insider(root)))
    before = note.read_bytes()
    arbiter = Signer.generate("arbiter.example")
    arbiter.save(tmp_path / "arbiter.key")
    result = cli("cosign", "--key", str(tmp_path / "arbiter.key"), "--ledger", str(root), "--size", str(int(note.stem)))
    assert result.exit_code == 1 and "not co-signed" in flat(result.output), result.output
    assert note.read_bytes() == before


def test_live_findings_edited_on_disk_are_refused_when_read(root: Path) -> None:
    """28.12: a finding rewritten in derived/live/findings is refused when served, not served until a restart."""
    store = LiveStore(root)
    for n in (1, 2):
        store.add(LiveFinding(id=n, entry=n, game="junqi", stream="g", seq=n, seat=0, player="P001", code="junqi.M10", article=None,
                              message="illegal move", severity="error"), None)
    store._write()
    assert [f.player for f in store.since(0, 10)] == ["P001", "P001"]
    path = root / "derived" / "live" / FINDINGS
    path.write_bytes(path.read_bytes().replace(b'"P001"', b'"P002"', 1))
    with pytest.raises(LedgerCorrupt, match="finding 1 was changed on disk"):
        store.since(0, 10)
    path.write_bytes(path.read_bytes().replace(b'"P002"', b'"P001"', 1).splitlines(keepends=True)[0])
    assert [f.player for f in store.since(0, 1)] == ["P001"]  # the first line is as written again
    with pytest.raises(LedgerCorrupt, match="finding 2 was changed on disk"):
        store.since(0, 10)  # the second was cut off


def test_a_ledger_from_before_the_index_is_checked_whole(tmp_path: Path) -> None:
    """28.6: a ledger without tiles or stream index (written before them): a reader of one stream
    checks the whole log against the signed root, and refuses an edited entry."""
    root = tmp_path / "legacy"
    shutil.copytree(Path(__file__).parent / "data" / "legacy-ledger", root)
    (root / PRIVATE_KEY).chmod(0o600)
    assert cli("replay", "--ledger", str(root), "--game", "g0").exit_code == 2  # timing streams, no game: as before
    _edit_ts(root, "g0", 1)
    result = cli("replay", "--ledger", str(root), "--game", "g0")
    assert result.exit_code == 1 and "the signed range was changed" in flat(result.output), result.output
