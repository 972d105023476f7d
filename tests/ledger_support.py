"""Helpers for ledger tests: event lines, ledger snapshots, CLI runs."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from typer.testing import CliRunner

from audit.cli import app


def event_line(stream: str, seq: int, kind: str = "game.move_time", **fields: object) -> bytes:
    """Returns one JSON event line; by default a timing event of seat 0."""
    body: dict[str, object] = {"kind": kind, "stream": stream, "seq": seq, "ts": 1_000 + seq}
    if kind == "game.move_time":
        body.update(seat=0, ms=500 + seq)
    body.update(fields)
    return json.dumps(body).encode()


def game_lines(streams: int, per_stream: int, start: int = 0) -> list[bytes]:
    """Returns interleaved timing events for several streams, seqs `start` … `start + per_stream - 1`."""
    return [event_line(f"g{s}", seq) for seq in range(start, start + per_stream) for s in range(streams)]


def snapshot(root: Path) -> dict[str, str]:
    """Returns the sha256 of every file of the ledger except the writer's lock file."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != "lock"}


def flat(output: str) -> str:
    """Returns a command's output without the frame rich draws around usage errors and with
    whitespace collapsed, so that a message reads the same whatever the terminal's width."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", output).split())


def cli(*args: str, input: bytes | None = None):  # noqa: ANN201 - click's Result
    """Runs the command line in-process."""
    return CliRunner().invoke(app, list(args), input=input)


def committed_entries(root: Path) -> list[tuple[int, bytes]]:
    """Returns (index, stored bytes) of every committed entry, signed or not, read by the frame parser:
    the attacks below need the unsigned tail that `LogReader` never shows (tests/test_one_reader.py
    lists this module as the tests' one exception)."""
    from ledger.frames import iter_packed

    return [(first + k, data) for first, part in iter_packed(root, 0) for k, data in enumerate(part.payloads(part.last_commit))]
