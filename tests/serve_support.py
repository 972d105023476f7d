"""Helpers for tests of the live service: the real `matchledger serve` in a subprocess on a loopback
port, sources with their keys, signed batches sent over plain HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import ledger as ledger_api
from ledger import Signer
from ledger import layout as ledger_layout
from ledger import sources as ledger_sources

ROOT = Path(__file__).resolve().parents[1]


class Server:
    """`matchledger serve` on 127.0.0.1 and a free port; its JSON log lines are collected."""

    def __init__(self, root: Path, *options: str) -> None:
        self.root = root
        self.proc = subprocess.Popen([sys.executable, "-c", "from audit.cli import main; main()", "serve", "--ledger", str(root),
                                      "--port", "0", *options], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, cwd=ROOT,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.lines: list[dict[str, Any]] = []
        self.raw: list[str] = []
        self._started = threading.Event()
        self.url = ""
        threading.Thread(target=self._read, daemon=True).start()
        if not self._started.wait(60) or not self.url:
            self.proc.kill()
            raise RuntimeError(f"the service did not start: {''.join(self.raw)[-2000:]}")

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for raw in iter(self.proc.stderr.readline, b""):
            text = raw.decode(errors="replace")
            self.raw.append(text)
            try:
                record = json.loads(text)
            except json.JSONDecodeError:
                continue
            self.lines.append(record)
            if record.get("at") == "started":
                self.url = record["url"]
                self._started.set()
        self._started.set()

    def stop(self) -> int:
        """Sends SIGTERM and waits: the graceful shutdown."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(30)

    def kill(self) -> None:
        """SIGKILL: no shutdown at all."""
        self.proc.kill()
        self.proc.wait(30)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.stop()

    def wait_for(self, predicate, timeout: float = 10.0) -> dict[str, Any]:  # noqa: ANN001
        """Returns the first log record satisfying `predicate`, waiting for it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for record in list(self.lines):
                if predicate(record):
                    return record
            time.sleep(0.02)
        raise AssertionError(f"no such log line in {self.lines[-5:]}")


LOG_ORIGIN = "serve.test/log"
"""The origin of the empty ledger of tests/conftest.py's `ledger_dir`."""

ORIGINS: dict[bytes, str] = {}
"""The origin of the log each source made here was registered in (by public key): `signed` signs for it."""


def log_of(ledger: Path) -> str:
    """Returns the log identity batches to `ledger` are signed for (its origin and key id)."""
    return ledger_sources.log_identity(ledger_layout.load_config(ledger).origin, ledger_api.load_verifier(ledger).key_id)


def make_source(tmp: Path, ledger: Path, name: str, **grants: list[str]) -> Signer:
    """Creates a source's key pair and registers it in the (stopped) ledger."""
    signer = Signer.generate(name)
    ORIGINS[signer.verifier.public] = log_of(ledger)
    ledger_sources.change_sources(ledger, lambda book, led: ledger_sources.registration(book, led, name, signer.verifier,
                                                                                grants.get("tournaments", []), grants.get("streams", [])))
    return signer


def lines(*events: bytes) -> bytes:
    """Returns a batch's body: each event line ended by a newline (JSONL)."""
    return b"".join(e + b"\n" for e in events)


def post(url: str, body: bytes, headers: dict[str, str] | None = None, path: str = "/batches") -> tuple[int, dict[str, str], bytes]:
    """POSTs a body; returns status, headers and body, whatever the status."""
    request = urllib.request.Request(url + path, data=body, headers=headers or {}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def get(url: str, path: str) -> tuple[int, bytes]:
    """GETs a path; returns status and body."""
    try:
        with urllib.request.urlopen(url + path, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def signed(signer: Signer, body: bytes, origin: str | None = None) -> dict[str, str]:
    """Returns the signature header of a body, signed for the log `origin` (`log_of`; by default the
    log the source was registered in, else one no log has)."""
    origin = origin or ORIGINS.get(signer.verifier.public, "unregistered.example/none")
    return {ledger_sources.HEADER: ledger_sources.sign_batch(signer, body, origin)}
