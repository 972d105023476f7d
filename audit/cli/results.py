"""What the commands return (issue 29.6): one typed result per command, whose fields are its `--json`
keys, declared here once; `lines()` is what a person reads. `audit.presentation.output.emit` prints either, and
tests/test_cli_docs.py holds README's `--json` keys column to these types (`RESULTS`). A summary the
library returns as a mapping (`demo`, `send`, `simulate --url`, `check-certificate`) is converted to its
type, which forbids unknown fields, so a key it adds, misspells or drops fails there, not in a reader's script."""

from __future__ import annotations

from typing import Any

import msgspec

from audit.presentation.output import Result, Rows
from audit.presentation.terms import EVENT_KINDS, TERMS


class Trust(msgspec.Struct, kw_only=True):
    """What an output says of its trust (`trust`): the log's key it was checked with (`ledger.anchor`'s
    record: where from, pinned or not, its id), the signed size and root it verified to (null where it
    did not), and the committed entries after that size it left unshown."""

    key: dict[str, Any]
    verified_size: int | None
    verified_root: str | None
    unsigned: int


class Initialised(Result):
    """`init`: the ledger made and its key pair."""

    ledger: str
    public_key: str
    verifier: str

    def lines(self) -> list[str]:
        return [f"已创建账本 / created ledger {self.ledger}", f"{TERMS['public_key'].both()}: {self.public_key}"]


class Recorded(Result):
    """`record`: the events appended, those already present, the tree size, and a repaired tail if any."""

    appended: int
    duplicates: int
    size: int
    recovered: str | None

    def lines(self) -> list[str]:
        return [f"已追加 {self.appended} 个事件，{self.duplicates} 个已存在；树大小 {self.size} / "
                f"appended {self.appended} events, {self.duplicates} already present; tree size {self.size}"]


class Verified(Result):
    """`verify` of a sound log: the signed size and root verified to, the unsigned entries after it, notes."""

    ok: bool
    size: int
    root: str
    unsigned: int
    checkpoints: int
    notes: list[str]
    not_cosigned: list[str]
    trust: Trust

    def lines(self) -> list[str]:
        return [verified_line(self.ok, self.size, self.root, self.checkpoints), *(f"{TERMS['note'].both()}: {note}" for note in self.notes)]


class Damaged(Result):
    """`verify` of a damaged log: where (the entry, when one is to blame) and what."""

    ok: bool
    index: int | None
    error: str | None
    trust: Trust


class Repaired(Result):
    """`repair`: what was rebuilt, what was missing or differed, where the old files are kept, or why nothing was."""

    ok: bool
    entries: int
    missing: list[str]
    differed: list[str]
    kept: str | None
    refused: str | None
    error: str | None

    def lines(self) -> list[str]:
        if self.refused is not None:  # nothing rebuilt: said on stderr
            return []
        verified = self.aside("verified")
        return [f"已由 {self.entries} 个条目重建瓦片、流索引与头 / rebuilt the tiles, stream index and head from {self.entries} entries",
                *(f"原缺 / was missing: {name}" for name in self.missing),
                *(f"与条目不符 / differed from its entries: {name}" for name in self.differed),
                f"移走的文件留存为证据 / the files moved aside are kept in {self.kept} (evidence); remove it when done",
                *([verified_line(True, verified.size, verified.root, verified.checkpoints)] if self.ok and verified is not None else [])]


class Proved(Result):
    """`prove`: the evidence bundle written."""

    stream: str
    entries: int
    out: str
    trust: Trust

    def lines(self) -> list[str]:
        return [f"已将 {self.stream} 的 {self.entries} 个条目连同包含证明写入 {self.out} / "
                f"wrote {self.entries} entries of {self.stream} with inclusion proofs to {self.out}"]


class BundleChecked(Result):
    """`check-proof` of an evidence bundle."""

    ok: bool
    stream: str
    entries: int
    size: int
    root: str
    complete: bool
    cosigners: list[str]
    proved: str

    def lines(self) -> list[str]:
        return [f"{TERMS['ok'].zh} / {TERMS['ok'].en}: {self.proved}"]  # the ledger's statement, zh-Hans first


class ReceiptsChecked(Result):
    """`check-proof` of a file of receipts (`send --receipts`)."""

    ok: bool
    receipts: int
    entries: int
    size: int
    proved: str

    def lines(self) -> list[str]:
        return [proof_line(f"{self.receipts} 张回执的 {self.entries} 个事件均包含在签名检查点中", self.proved)]


class ReceiptChecked(Result):
    """`check-proof` of one receipt of the live service."""

    ok: bool
    source: str
    entries: int
    size: int
    root: str
    proved: str

    def lines(self) -> list[str]:
        return [proof_line(f"来源 {self.source} 的 {self.entries} 个事件包含在大小为 {self.size} 的签名检查点中", self.proved)]


class Consistent(Result):
    """`consistency`: the proof that the log at `old` is a prefix of the log at `new`."""

    old: int
    new: int
    old_root: str
    new_root: str
    proof: list[str]
    out: str | None
    trust: Trust

    def lines(self) -> list[str]:
        said = [f"核对通过：{self.old} 个条目的日志是 {self.new} 个条目的日志的前缀，证明含 {len(self.proof)} 个哈希 / "
                f"ok: the log at {self.old} entries (root {self.old_root}) is a prefix of the log at {self.new} "
                f"(root {self.new_root}); proof of {len(self.proof)} hashes:", *(f"  {h}" for h in self.proof)]
        return said + ([f"已将证明写入 {self.out} / wrote the proof to {self.out}"] if self.out else [])


class ConsistencyChecked(Result):
    """`check-consistency`: the two signed sizes and roots, one a prefix of the other."""

    ok: bool
    old: int
    new: int
    old_root: str
    new_root: str

    def lines(self) -> list[str]:
        return [f"核对通过：{self.aside('origin')} 在 {self.old} 个条目时的日志是 {self.new} 个条目时的日志的前缀 / "
                f"ok: the log of {self.aside('origin')} at {self.old} entries (root {self.old_root}) is a prefix of the log at "
                f"{self.new} entries (root {self.new_root})"]


class Witnessed(Result):
    """`witness`: the checkpoint now remembered, and the size remembered before (None at the first visit)."""

    ok: bool
    origin: str
    size: int
    root: str
    previous_size: int | None
    state: str
    trust: Trust

    def lines(self) -> list[str]:
        if self.previous_size is None:
            return [f"首次见证 / first visit: remembered the checkpoint of {self.origin} at size {self.size} (root {self.root}) in {self.state}"]
        if self.previous_size == self.size:
            return [f"日志未变 / ok: the log of {self.origin} is unchanged at size {self.size} (root {self.root})"]
        return [f"日志只增未改 / ok: the log of {self.origin} grew from {self.previous_size} to {self.size} entries and the older tree is a prefix "
                f"of the newer (consistency proof checked); remembered size {self.size} in {self.state}"]


class EntriesExported(Result):
    """`export --jsonl`: the signed entries written as stored."""

    entries: int
    jsonl: str
    trust: Trust

    def lines(self) -> list[str]:
        return [f"wrote {self.entries} entries to {self.jsonl}"]


class TilesExported(Result):
    """`export --tiles`: the log laid out as tlog-tiles at its signed size."""

    size: int
    tiles: str
    trust: Trust

    def lines(self) -> list[str]:
        return [f"wrote the checkpoint, tiles and entry bundles of the log at size {self.size} to {self.tiles} (serve it as static files)"]


class ParquetExported(Result):
    """`export --parquet`: the Parquet files written and the checkpoint the manifest names."""

    files: int
    parquet: str
    checkpoint: dict[str, Any]
    trust: Trust

    def lines(self) -> list[str]:
        documents = ", ".join(f"{self.parquet}/{d}" for d in self.aside("documents", []))
        return [f"wrote {self.files} Parquet files, {documents}, {self.parquet}/manifest.json and its signed note"]


class RecordsExported(Result):
    """`export --format record`: the games' text records (`out` None: on stdout)."""

    games: int
    out: str | None
    trust: Trust

    def lines(self) -> list[str]:
        if self.out is None:  # the record went to stdout, which keeps it to itself
            return []
        game = self.aside("game")
        return [f"wrote the record of {game} to {self.out}" if game else
                f"wrote the records of {self.games} games of {self.aside('tournament')} to {self.out}"]


class ReportWritten(Result):
    """`report --game`: the arbitration report written, its events and findings, and whether its proofs checked."""

    game: str
    out: str
    events: int
    findings: int
    proof: str
    trust: Trust

    def lines(self) -> list[str]:
        return [f"已写入 / wrote {self.out}: {self.events} events, {self.findings} findings; {self.proof}"]


class PageWritten(Result):
    """`report --tournament`: the tournament page and each game's report beside it."""

    tournament: str
    out: str
    players: int
    games: int
    reports: list[str]
    trust: Trust

    def lines(self) -> list[str]:
        return [f"已写入 / wrote {self.out}: {self.players} players, {self.games} games, each game's report beside it"]


class HuJudged(Result, omit_defaults=True):
    """`hu`: whether the hand wins, its 胡息, counts of red, big and small cards, 名堂, score and why; `trust` with `--game`."""

    hu: bool
    huxi: int
    red: int
    big: int
    small: int
    mingtang: list[str]
    score: int
    reason: str
    trust: Trust | None = None

    def lines(self) -> list[str]:
        decomposition = self.aside("decomposition")
        return [("胡 (wins)" if self.hu else "不胡 no hu") + f": {self.reason}",
                *(["组牌 decomposition: " + " | ".join(decomposition)] if decomposition else []),
                f"胡息 {self.huxi}; 红 red {self.red}, 大 big {self.big}, 小 small {self.small}",
                f"名堂: {', '.join(self.mingtang) or '无 none'}; 得分 score {self.score}"]


class KeyMade(Result):
    """`keygen`: an arbiter's key pair."""

    private_key: str
    public_key: str
    verifier: str

    def lines(self) -> list[str]:
        key_id = self.verifier.split("+")[1]  # a C2SP verifier key: name+keyid+key
        return [f"{TERMS['private_key'].both()}: {self.private_key}", f"{TERMS['public_key'].both()}: {self.public_key}",
                f"{TERMS['key_id'].both()}: {key_id}"]


class Cosigned(Result):
    """`cosign`: the checkpoint with the arbiter's co-signature."""

    size: int
    root: str
    note: str

    def lines(self) -> list[str]:
        return [self.note]


class Planted(msgspec.Struct, kw_only=True):
    """The fault `simulate --inject` planted, and where."""

    kind: str
    stream: str | None
    seq: int | None
    entry: int | None


class Simulated(Result):
    """`simulate` into a ledger: the games and events recorded, the tree size, the tournament and a planted fault."""

    games: int
    events: int
    size: int
    tournament: str | None
    planted: Planted | None

    def lines(self) -> list[str]:
        what = f"tournament {self.tournament}: " if self.tournament else ""
        planted = self.aside("planted_said")
        return [f"已记录 / {what}recorded {self.games} {self.aside('game')} games, {self.events} events; tree size {self.size}",
                *([planted] if planted else [])]


class SimulatedLive(Result, forbid_unknown_fields=True):
    """`simulate --url`: the run's tag, its tables (one game and source each), the events sent, the tree size, the streams."""

    tag: str
    tables: int
    games: int
    events: int
    size: int
    streams: list[str]

    def lines(self) -> list[str]:
        return [f"已发送 / {self.tables} tables ({self.tag}/t1 …) sent {self.events} events, every receipt checked; tree size {self.size}"]


class SeatShown(msgspec.Struct, kw_only=True):
    """A seat of `show`: its number and its label (`2 N/p07`)."""

    seat: int
    label: str


class Shown(Result):
    """`show`: the position after an event, as text and, when asked, as an SVG file."""

    game: str
    seq: int
    kind: str
    text: str
    svg: str | None
    seats: list[SeatShown]
    trust: Trust
    refused: list[dict[str, Any]]
    """The findings of the refused event at this step (empty where the step is derived)."""
    as_claimed: bool
    """True beyond a halted replay: the board is the one the log claims, not derived."""

    def lines(self) -> list[str]:
        extra = self.aside("extra")
        return [f"{self.game} 事件序号 {self.seq} 之后 / after seq {self.seq} ({self.kind})", "座位 seats: " + ", ".join(s.label for s in self.seats),
                self.aside("board"), *([extra] if extra is not None else []), *([f"wrote {self.svg}"] if self.svg else [])]


class Counted(Result, omit_defaults=True):
    """`perft`: the counts at each depth, the last one, and with `--divide` each first move's count."""

    counts: list[int]
    count: int
    divide: dict[str, int] | None = None

    def lines(self) -> list[str]:
        return [*(f"{move}: {n}" for move, n in (self.divide or {}).items()),
                *(f"depth {d}: {n}" for d, n in enumerate(self.counts, start=1)), str(self.count)]


class ArbitrationRecorded(Result):
    """`appeal register|file|decide|rule`: the signed event written."""

    kind: str
    stream: str
    seq: int
    ts: int
    size: int
    arbiter: str | None

    def lines(self) -> list[str]:
        by_zh, by = (f"，由 {self.arbiter} 签名", f", signed by {self.arbiter}") if self.arbiter else ("", "")
        return [f"已记录{EVENT_KINDS.get(self.kind, '')} {self.stream}#{self.seq}{by_zh}；树大小 {self.size} / "
                f"recorded {self.kind} at {self.stream}#{self.seq}{by}; tree size {self.size}"]


class Ranked(Result):
    """`standings`: the ranking with every tie-break column, each row's status judged as of `as_of`."""

    tournament: str
    game: str
    format: str
    as_of: str | None
    rows: list[dict[str, Any]]
    trust: Trust

    def lines(self) -> list[str | Rows]:
        return [*([f"成绩状态截至 status as of {self.as_of}"] if self.as_of else []), self.aside("table")]


class Legend(Result):
    """`standings --legend`: what each column of the tournament's standings means."""

    tournament: str
    legend: list[dict[str, Any]]
    trust: Trust


class Explained(Result):
    """`standings --explain`: the chain from events to one player's rank."""

    player: str
    rank: dict[str, Any]
    games: list[dict[str, Any]]
    boards: list[dict[str, Any]]
    seating: list[dict[str, Any]]
    trust: Trust


class Crossed(Result):
    """`standings --crosstable`: each player's result in every round."""

    tournament: str
    format: str
    rounds: list[int]
    rows: list[dict[str, Any]]
    trust: Trust


class Queried(Result):
    """`query`: the columns and rows of the SQL or named query."""

    columns: list[str]
    rows: list[list[Any]]
    trust: Trust


class AppealsListed(Result):
    """`appeals`: every appeal as the query `appeal_list` gives it."""

    appeals: list[dict[str, Any]]
    trust: Trust


class Replayed(Result):
    """`replay`: the games, events and moves re-derived, every finding, and how long it took."""

    games: int
    events: int
    moves: int
    findings: list[dict[str, Any]]
    seconds: float
    trust: Trust

    def lines(self) -> list[str]:
        return [f"对局 games {self.games}, 事件 events {self.events}, 着法 moves {self.moves}, 发现 findings {len(self.findings)}, "
                f"用时 seconds {self.aside('exact_seconds', self.seconds):.2f}", *self.aside("said", [])]


class CheckDone(msgspec.Struct, kw_only=True):
    """One check of `audit`: what passed and failed, whether it ran and had anything to look at, examples."""

    check: str
    title: str
    passed: int
    failed: int
    ran: bool
    applies: bool
    examples: list[str]


class Certified(Result, omit_defaults=True):
    """`audit`: the verdict and why, the signed size and root verified to, every check and finding, and the certificate written."""

    ok: bool
    reason: str
    size: int
    root: str | None
    unsigned: int
    games: int
    as_of: str | None
    trust: Trust
    checks: list[CheckDone]
    findings: list[dict[str, Any]]
    warnings: list[dict[str, Any]]
    certificate: dict[str, Any] | None = None

    def lines(self) -> list[str | Rows]:
        written = self.aside("written")
        return [self.aside("table"), *self.aside("said", []), *self.aside("trust_said", []),
                f"{'认证通过' if self.ok else '未通过认证'} {self.aside('verdict')}", *([written] if written else []),
                *([f"成绩状态截至 status as of {self.as_of}"] if self.as_of else [])]


class Demonstrated(Result, forbid_unknown_fields=True):
    """`demo`: the verdict, the log's size and root, the tournaments, games and findings, each check's counts, the accelerators."""

    ok: bool
    size: int
    root: str
    tournaments: list[str]
    games: int
    findings: int
    checks: dict[str, dict[str, int]]
    accelerators: dict[str, bool]

    def lines(self) -> list[str | Rows]:
        proof, games = self.aside("proof"), self.aside("games_played")
        entry = proof.entries[-1]
        verdict = "认证通过 CERTIFIED: every check passed" if self.aside("certified") else f"未通过认证 NOT CERTIFIED: {self.findings} findings"
        return [f"matchledger demo: simulated a tournament of each game ({', '.join(games)}) through the recorder into "
                f"{self.aside('ledger')}, then verified the log, replayed every game and audited every result, score, seating and "
                f"timing against the rules.\n",
                f"log: {self.size} entries, root {self.root}, {self.aside('checkpoints')} signed checkpoints verified",
                *self.aside("tables"),
                f"evidence for {proof.stream}: {len(proof.entries)} entries proved against the checkpoint; "
                f"entry {entry.index} has a {len(entry.proof)}-hash inclusion proof",
                "the signed checkpoint they are proved against (a C2SP note: origin, size, root, signature; the newest: "
                f"{self.aside('ledger')}/checkpoint):",
                "\n".join(f"  {line}".rstrip() for line in proof.checkpoint.rstrip().splitlines()),
                verdict, self.aside("accelerator_line"), self.aside("next_steps")]


class Sent(Result, forbid_unknown_fields=True):
    """`send`: the events and batches sent, the first and last entry they became, the checkpoint size, whether signatures were checked."""

    events: int
    batches: int
    first: int | None
    last: int | None
    size: int
    signature_checked: bool

    def lines(self) -> list[str]:
        checked = "signature and proofs" if self.signature_checked else "proofs only (no --log-key)"
        return [f"已发送 / sent {self.events} events in {self.batches} batches; entries {self.first}–{self.last}, "
                f"checkpoint {self.size}; receipts checked: {checked}"]


class SourceAdded(Result, forbid_unknown_fields=True):
    """`source add`: the `source.registered` event recorded, key for key."""

    kind: str
    stream: str
    seq: int
    ts: int
    seat: int | None
    v: int
    name: str
    key: str
    tournaments: list[str]
    streams: list[str]

    def lines(self) -> list[str]:
        grants = ", ".join(self.tournaments + self.streams) or "any stream no other source writes"
        return [f"已登记来源 / registered source {self.name} (key {self.key}); it may write: {grants}"]


class SourceRemoved(Result, forbid_unknown_fields=True):
    """`source revoke`: the `source.revoked` event recorded, key for key."""

    kind: str
    stream: str
    seq: int
    ts: int
    seat: int | None
    v: int
    name: str
    reason: str

    def lines(self) -> list[str]:
        return [f"已吊销来源 / revoked source {self.name}"]


class CertificateChecked(Result, forbid_unknown_fields=True):
    """`check-certificate`: the verdict the certificate states, the checkpoint it names, the auditor, the whole statement."""

    ok: bool
    verdict: str
    certified: bool
    reason: str
    as_of: str | None
    origin: str
    size: int
    root: str
    auditor: str
    statement: dict[str, Any]

    def lines(self) -> list[str]:
        return list(self.aside("said", []))


def verified_line(ok: bool, size: int, root: str, checkpoints: int) -> str:
    """Says what a verification reached (`verify`, `repair`), zh-Hans first: the signed size, its root, the checkpoints checked."""
    said = TERMS["ok" if ok else "log_ok"]
    return (f"{said.zh} / {said.en}: {TERMS['tree_size'].both()} {size}, {TERMS['root'].both()} {root}, "
            f"{TERMS['checkpoints_verified'].both()} {checkpoints}")


def proof_line(zh: str, proved: str) -> str:
    """Says what `check-proof` proved: a sentence in zh-Hans, then the statement in English."""
    return f"{TERMS['ok'].zh}：{zh} / {TERMS['ok'].en}: {proved}"


RESULTS: dict[str, tuple[type[Result], ...]] = {
    "init": (Initialised,), "record": (Recorded,), "verify": (Verified, Damaged), "repair": (Repaired,), "prove": (Proved,),
    "check-proof": (BundleChecked, ReceiptsChecked, ReceiptChecked), "consistency": (Consistent,),
    "check-consistency": (ConsistencyChecked,), "witness": (Witnessed,), "keygen": (KeyMade,), "cosign": (Cosigned,),
    "simulate": (Simulated, SimulatedLive), "show": (Shown,), "perft": (Counted,), "hu": (HuJudged,),
    "export": (EntriesExported, TilesExported, ParquetExported, RecordsExported), "report": (ReportWritten, PageWritten),
    "appeal register": (ArbitrationRecorded,), "appeal file": (ArbitrationRecorded,), "appeal decide": (ArbitrationRecorded,),
    "appeal rule": (ArbitrationRecorded,), "standings": (Ranked, Legend, Explained, Crossed), "query": (Queried,),
    "appeals": (AppealsListed,), "replay": (Replayed,), "audit": (Certified,), "demo": (Demonstrated,), "send": (Sent,),
    "check-certificate": (CertificateChecked,), "source add": (SourceAdded, SourceRemoved),  # README's one row: add, revoke
}
"""Each command's result types: README's `--json` keys column names their fields (tests/test_cli_docs.py)."""
