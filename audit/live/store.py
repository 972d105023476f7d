"""What the live service has published, kept in the ledger (`derived/live/`) so that a restart reads
the games still open and the entries recorded since, not the whole season.

These files, written only by the service (which holds the writer lock) through `ledger.DerivedFiles`:

- `findings`: every published finding, one JSON line each, in id order (`GET /findings` reads them);
- `keys`: the round findings' keys (code, stream, seq as the audit gives it), so that a round close
  after a restart publishes only what no earlier one did;
- `games`: each tournament game's stream as it starts (a round close reads its tournament's games
  through the stream index);
- `rounds-<sha256>`: what a tournament's last round close kept of its games for the next
  (audit/live/rounds.py: each game's small rows), one file per tournament, named by its content;
- `state`: how far the log was folded when the files were last consistent: its size and Merkle root
  there, the findings' count, byte length and SHA-256, the lengths and SHA-256 of `keys` and `games`,
  the games under way, the streams that are not games and which of them are tournaments, each
  tournament's `rounds-` file and its games touched since its last round close, signed by
  the log's key (a C2SP signed note over the state's SHA-256, on the lines after it). It is replaced
  whole about once a second and when the service stops.

At start-up the state is checked against the log and the files: signed by the log's key (so that
someone who can write the files but holds no key cannot have a restart serve a history of findings,
or skip round findings as published, that the log does not give), written by this format and version,
a size the log reaches, the log's root at that size (the log it was made from), files at least as
long as it says, and the findings' SHA-256. Anything else (missing, unreadable, torn, another log,
other code (audit.query.signed_state.code_fingerprint), another signer) and the files are removed
and rebuilt by folding the whole log. A file longer than
the state says holds what was published after the state was written: it is cut back, and the
entries since the state are folded again, which publishes the same findings under the same numbers.

These files are derived data: a restart trusts them for the numbering of the live findings and to
avoid reading closed games, never for a verdict (`verify` and `audit` read the log).
"""

from __future__ import annotations

import hashlib
import time
from array import array
from pathlib import Path
from typing import Any

import msgspec

from audit.live.auditor import LedgerLog, LiveAuditor, LiveFinding
from audit.live.rounds import RoundRows, decode, encode
from audit.query.signed_state import StateRefused, code_fingerprint, load_signer, open_state, sign_state
from ledger import LedgerCorrupt, LedgerError, Signer
from ledger.derived import DerivedFiles, tree_root

NAME = "live"
FINDINGS, KEYS, GAMES, STATE, ROUNDS = "findings", "keys", "games", "state", "rounds"
FORMAT = 3
SIGNED_FORMAT = "matchledger-live-state/3"
"""The second line of the note that signs a state (the first is the log's origin)."""
SAVE_EVERY_S = 1.0
"""How often the state is written while entries arrive (the entries since are folded again after a crash)."""
Key = tuple[str, str, "int | None"]


class State(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How far the log was folded when the files were last consistent (see the module's text)."""

    format: int
    version: str
    size: int
    root: str
    findings: int
    findings_bytes: int
    findings_sha256: str
    keys_bytes: int
    keys_sha256: str
    games_bytes: int
    games_sha256: str
    open: list[str]
    others: list[str]
    tournaments: list[str]
    rounds: dict[str, str]
    """Each tournament's `rounds-<sha256>` file (audit/live/rounds.py)."""
    touched: dict[str, list[str]]
    """Each tournament's games with an entry folded since its last round close."""


class Opened(msgspec.Struct, frozen=True):
    """How the live audit opened: resumed from its files, or rebuilt (and why)."""

    resumed: bool
    reason: str | None
    size: int
    """The log's size the audit starts from (entries after it are folded next)."""
    findings: int
    open_games: int
    entries_read: int


_finding = msgspec.json.Decoder(LiveFinding)
_key = msgspec.json.Decoder(tuple[str, str, int | None])
_game = msgspec.json.Decoder(tuple[str, str])


class LiveStore:
    """The findings book of the service's live audit, kept in `derived/live/` of the ledger."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files = DerivedFiles(root, NAME)
        self.published: set[Key] = set()
        self._offsets = array("q", [0])
        """Finding id n is findings[_offsets[n - 1]:_offsets[n]] (only their places are kept, not the findings)."""
        self._digests = bytearray()
        """The SHA-256 of each finding's line as written (or as checked against the signed state): a line
        changed on disk since is refused when read, not served until a restart (issue 28.12)."""
        self._sha = hashlib.sha256()
        self._keys_bytes = self._games_bytes = 0
        self._keys_sha, self._games_sha = hashlib.sha256(), hashlib.sha256()
        self._signer: Signer | None = None
        self._pending: list[bytes] = []
        self._pending_keys: list[bytes] = []
        self._pending_games: list[bytes] = []
        self._saved_at = 0.0
        self._known_root: tuple[int, bytes] = (-1, b"")
        self.rounds: dict[str, RoundRows] = {}
        """The rows each tournament's last round close kept, as read at a resume."""
        self._rounds: dict[str, tuple[RoundRows, str]] = {}
        """The rows last written for each tournament, and their file."""

    # -- the book ----------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._offsets) - 1 + len(self._pending)

    def add(self, finding: LiveFinding, key: Key | None) -> None:
        self._pending.append(msgspec.json.encode(finding) + b"\n")
        if key is not None:
            self.published.add(key)
            self._pending_keys.append(msgspec.json.encode(key) + b"\n")

    def since(self, n: int, limit: int) -> list[LiveFinding]:
        """Returns the findings numbered after `n` (at most `limit`), read from the file: only
        findings written out are returned (a feed writes its findings before it returns them)."""
        offsets = self._offsets
        n, stop = max(n, 0), min(len(offsets) - 1, max(n, 0) + limit)
        if n >= stop:
            return []
        data = self.files.read(FINDINGS, offsets[n], offsets[stop] - offsets[n])
        lines = data.splitlines(keepends=True)
        lines += [b""] * (stop - n - len(lines))  # a file cut short: the missing lines are changed lines
        for k, line in enumerate(lines, n):
            if hashlib.sha256(line).digest() != self._digests[32 * k:32 * k + 32]:
                raise LedgerCorrupt(None, f"实时结论文件已被改动 / {self.root}/derived/{NAME}/{FINDINGS}: finding {k + 1} was changed on "
                                    f"disk after it was written; it is not served (a restart rebuilds the file from the log)")
        return [_finding.decode(line) for line in lines]

    def add_game(self, tournament: str, stream: str) -> None:
        self._pending_games.append(msgspec.json.encode((tournament, stream)) + b"\n")

    def games_of(self, tournament: str) -> list[str]:
        self._write()
        lines = self.files.read(GAMES, 0, self._games_bytes).splitlines()
        return [stream for t, stream in map(_game.decode, lines) if t == tournament]

    def fed(self, auditor: LiveAuditor) -> None:
        """Writes out what the feed published and, about once a second, the state."""
        self._write()
        if time.monotonic() - self._saved_at >= SAVE_EVERY_S:
            self.save(auditor)

    def _write(self) -> None:
        for line in self._pending:
            self._offsets.append(self._offsets[-1] + len(line))
            self._digests += hashlib.sha256(line).digest()
        self._flush(FINDINGS, self._pending, self._sha)
        self._keys_bytes += self._flush(KEYS, self._pending_keys, self._keys_sha)
        self._games_bytes += self._flush(GAMES, self._pending_games, self._games_sha)

    def _flush(self, name: str, pending: list[bytes], sha: Any) -> int:
        """Appends the lines waiting for a file to it and to its running SHA-256; returns how many bytes."""
        if not pending:
            return 0
        data = b"".join(pending)
        self.files.append(name, data)
        sha.update(data)
        pending.clear()
        return len(data)

    def known_root(self, size: int, root: bytes) -> None:
        """Notes the log's Merkle root at a size (a signed checkpoint's): a state saved at that size
        names it without reading the tiles (at a live event's pace that reading, once a second, took
        20-90 ms of the auditor's thread, most of it holding the interpreter lock)."""
        self._known_root = (size, root)

    def save(self, auditor: LiveAuditor) -> None:
        """Writes the state: the files are consistent with the log's first `auditor.size` entries."""
        self._write()
        size, known = self._known_root
        try:
            root = (known if size == auditor.size else tree_root(self.root, auditor.size)).hex()
        except LedgerError:  # the tiles do not reach that far yet: the state written before stands
            return
        rounds = {t: self._rounds_file(t, rows) for t, rows in sorted(auditor.rounds.items())}
        state = State(format=FORMAT, version=code_fingerprint(), size=auditor.size, root=root, findings=len(self._offsets) - 1,
                      findings_bytes=self._offsets[-1], findings_sha256=self._sha.hexdigest(), keys_bytes=self._keys_bytes,
                      keys_sha256=self._keys_sha.hexdigest(), games_bytes=self._games_bytes, games_sha256=self._games_sha.hexdigest(),
                      open=sorted(auditor.games), others=sorted(auditor.others), tournaments=sorted(auditor.tournaments),
                      rounds=rounds, touched={t: sorted(games) for t, games in sorted(auditor.touched.items()) if games})
        if self._signer is None:
            self._signer = load_signer(self.root)  # the service holds it: it signs the checkpoints
        self.files.replace(STATE, sign_state(self._signer, SIGNED_FORMAT, msgspec.json.encode(state)))
        self._saved_at = time.monotonic()
        for stale in {n for n in self.files.names() if n.startswith(f"{ROUNDS}-")} - set(rounds.values()):
            self.files.remove(stale)  # rows a later round close replaced, once the state names their successor

    def _rounds_file(self, tournament: str, rows: RoundRows) -> str:
        """Returns the file of a tournament's kept rows, written when they are not the rows written last (a round closed since)."""
        written = self._rounds.get(tournament)
        if written is None or written[0] is not rows:
            data = encode(rows)
            written = self._rounds[tournament] = (rows, self.files.write_named(ROUNDS, lambda out: out.write(data))[0])
        return written[1]

    # -- opening -------------------------------------------------------------------------------------

    def resume(self, size: int) -> State | str:
        """Checks the files against the log of `size` entries; returns their state, with the files
        cut back to it and the findings' places and the round keys read, or why they must be rebuilt."""
        raw = self.files.read(STATE)
        if not raw:
            return "no state was kept yet" if not self.files.size(FINDINGS) else "the state is missing"
        try:
            state = msgspec.json.decode(open_state(self.root, SIGNED_FORMAT, raw), type=State)
        except StateRefused as exc:
            return f"the state cannot be used: {exc}"
        except msgspec.DecodeError as exc:
            return f"the state is unreadable ({exc})"
        if (state.format, state.version) != (FORMAT, code_fingerprint()):
            return f"the files were written by other code ({state.version}, format {state.format})"
        if state.size > size:
            return f"the state covers {state.size} entries, the log holds {size}"
        try:
            if tree_root(self.root, state.size).hex() != state.root:
                return f"the log's root at size {state.size} is not the one the files were made from"
        except LedgerError as exc:
            return f"the log's root at size {state.size} cannot be read ({exc})"
        for name, length in ((FINDINGS, state.findings_bytes), (KEYS, state.keys_bytes), (GAMES, state.games_bytes)):
            if self.files.size(name) < length:
                return f"the {name} file is shorter than its state says ({self.files.size(name)} < {length} bytes)"
        data = self.files.read(FINDINGS, 0, state.findings_bytes)
        if hashlib.sha256(data).hexdigest() != state.findings_sha256:
            return "the findings file does not match its state (SHA-256)"
        keys, games = self.files.read(KEYS, 0, state.keys_bytes), self.files.read(GAMES, 0, state.games_bytes)
        for name, held, want in ((KEYS, keys, state.keys_sha256), (GAMES, games, state.games_sha256)):
            if hashlib.sha256(held).hexdigest() != want:
                return f"the {name} file does not match its state (SHA-256)"
        offsets = _line_ends(data)
        if len(offsets) - 1 != state.findings:
            return f"the findings file holds {len(offsets) - 1} findings, its state says {state.findings}"
        rounds = {}
        for tournament, name in state.rounds.items():
            held = self.files.read(name) if name.startswith(f"{ROUNDS}-") and "/" not in name else b""
            if hashlib.sha256(held).hexdigest() != name.removeprefix(f"{ROUNDS}-"):
                return f"the kept rows of {tournament} ({name}) do not match their name"
            try:
                rounds[tournament] = decode(held)
            except (msgspec.DecodeError, ValueError) as exc:
                return f"the kept rows of {tournament} are unreadable ({exc})"
        for name, length in ((FINDINGS, state.findings_bytes), (KEYS, state.keys_bytes), (GAMES, state.games_bytes)):
            self.files.truncate(name, length)  # what was published after the state is published again
        self._offsets, self._sha = offsets, hashlib.sha256(data)
        self._digests = bytearray(b"".join(hashlib.sha256(line).digest() for line in data.splitlines(keepends=True)))
        self._keys_bytes, self._games_bytes = state.keys_bytes, state.games_bytes
        self._keys_sha, self._games_sha = hashlib.sha256(keys), hashlib.sha256(games)
        self.published = {_key.decode(line) for line in keys.splitlines()}
        self.rounds = rounds
        self._rounds = {t: (rows, state.rounds[t]) for t, rows in rounds.items()}
        return state


def _line_ends(data: bytes) -> array:
    ends = array("q", [0])
    at = data.find(b"\n")
    while at >= 0:
        ends.append(at + 1)
        at = data.find(b"\n", at + 1)
    return ends


def open_auditor(root: Path, size: int) -> tuple[LiveAuditor, Opened]:
    """Opens the service's live audit on a ledger of `size` entries: from its files when they agree
    with the log (reading only the games under way, through the stream index), else with empty
    files. Either way the entries after `Opened.size` are still to be folded
    (`LiveAuditor.catch_up`): the entries since the state, or the whole log for a rebuild.
    """
    store = LiveStore(root)
    log = LedgerLog(root)
    auditor = LiveAuditor(log, store)
    state = store.resume(size)
    if isinstance(state, str):
        store.files.clear()
        store = LiveStore(root)
        auditor.book = store
        return auditor, Opened(False, state, 0, 0, 0, 0)
    log.prime(state.size)
    auditor.others, auditor.tournaments = set(state.others), set(state.tournaments)
    auditor.rounds, auditor.touched = dict(store.rounds), {t: set(games) for t, games in state.touched.items()}
    for stream in state.open:
        auditor.games[stream] = auditor.refold(log.stream(stream, state.size))
    auditor.size = state.size
    return auditor, Opened(True, None, state.size, state.findings, len(state.open), log.entries_read)


def opened_line(opened: Opened, auditor: LiveAuditor, seconds: float) -> dict[str, object]:
    """Returns the service's log record of how the live audit opened."""
    return {"at": "live", "resumed": opened.resumed, "reason": opened.reason, "from": opened.size, "size": auditor.size,
            "findings": len(auditor.book), "open_games": len(auditor.games), "entries_read": auditor.log.entries_read,
            "seconds": round(seconds, 3)}

