"""Reading a command's input files with errors that name the file and what it should have been."""

from __future__ import annotations

from pathlib import Path


def read_input(path: Path, expected: str) -> bytes:
    """Reads an input file.

    :raises OSError: naming the file and what was expected, when it is missing or unreadable (a
        missing file or a directory is a usage error: FileNotFoundError, IsADirectoryError).
    """
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file (expected {expected})") from None
    except IsADirectoryError:
        raise IsADirectoryError(f"{path} is a directory (expected {expected})") from None
    except OSError as exc:
        raise OSError(f"{path}: cannot read {expected}: {exc.strerror or exc}") from None


def read_text(path: Path, expected: str) -> str:
    """Reads an input file as UTF-8 text.

    :raises OSError: as `read_input`, or when it is not UTF-8.
    """
    try:
        return read_input(path, expected).decode()
    except UnicodeDecodeError:
        raise OSError(f"{path}: not UTF-8 text (expected {expected})") from None
