"""Ed25519 keys and C2SP signed notes (the checkpoint format of transparency logs)."""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from ledger.ed25519 import has_small_order
from ledger.errors import KeyFileError, SignatureError

ALG_ED25519 = b"\x01"
SIG_PREFIX = "— "  # U+2014 EM DASH and a space open every signature line of a signed note


UNICODE_SPACES = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
                           "\u200a\u2028\u2029\u202f\u205f\u3000")
"""Unicode's White_Space property: what Go's `unicode.IsSpace` tests and the C2SP signed-note spec forbids in key names."""


def is_key_name(name: str) -> bool:
    """Tells whether a key or origin name is one C2SP signed notes and Go's sumdb/note accept
    (non-empty, no Unicode space, no `+`), and is printable (no control or format character)."""
    return bool(name) and "+" not in name and not any(c in UNICODE_SPACES or not c.isprintable() for c in name)


def check_key_name(name: str) -> str:
    """Returns a key or origin name that C2SP signed notes (and Go's sumdb/note) accept.

    :raises KeyFileError: when it is empty, or holds a space, a control character or `+`.
    """
    if not is_key_name(name):
        raise KeyFileError(f"key name {name!r} is not valid for a signed note: it must be non-empty, without spaces, "
                           "control characters or '+'")
    return name


def check_note_text(text: str) -> str:
    """Returns a note body that Go's sumdb/note would sign and open: ending in a newline, and no
    control character but newlines (C2SP signed-note).

    :raises SignatureError: naming the first offending character.
    """
    if not text.endswith("\n"):
        raise SignatureError("a note's text must end with a newline")
    for at, c in enumerate(text):
        if (c < " " and c != "\n") or c == "\x7f":
            raise SignatureError(f"a note's text may hold no control character but newlines: {c!r} at character {at}")
    return text


def _key_id(name: str, public: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + ALG_ED25519 + public).digest()[:4]


class Verifier:
    """A C2SP verifier key: `<name>+<hex key id>+<base64(0x01 ‖ public key)>`."""

    def __init__(self, name: str, public: bytes) -> None:
        """:raises KeyFileError: when the key is a small-order point, under which signatures are forgeable."""
        if has_small_order(public):
            raise KeyFileError(f"verifier key {name!r} is a small-order point: anyone could forge its signatures")
        self.name = name
        self.public = public
        self.key_id = _key_id(name, public)
        self._key = Ed25519PublicKey.from_public_bytes(public)

    @classmethod
    def parse(cls, text: str) -> Verifier:
        """Parses a verifier key string.

        :raises KeyFileError: when it is malformed or its key id does not match.
        """
        parts = text.strip().split("+", 2)
        if parts[0] == "PRIVATE":
            raise KeyFileError("this is a private signing key, not a verifier key (its text is not shown); give the .pub file")
        if len(parts) != 3 or not is_key_name(parts[0]) or "\n" in parts[2]:  # the text is never echoed: it may be a secret
            raise KeyFileError("malformed verifier key: expected one line NAME+HEXID+BASE64 (the text is not shown)")
        name, hex_id, b64 = parts
        try:
            raw = base64.b64decode(b64, validate=True)
        except ValueError:
            raise KeyFileError(f"verifier key {name!r}: its key is not base64") from None
        if raw[:1] != ALG_ED25519 or len(raw) != 33:
            raise KeyFileError(f"verifier key {name!r} is not an Ed25519 key")
        verifier = cls(name, raw[1:])
        if verifier.key_id.hex() != hex_id:
            raise KeyFileError(f"verifier key {name!r} has id {hex_id}, its key gives {verifier.key_id.hex()}")
        return verifier

    @classmethod
    def load(cls, path: Path) -> Verifier:
        """Reads a verifier key file.

        :raises KeyFileError: when it is missing, not a regular text file, or malformed.
        """
        try:
            if not path.is_file():
                raise KeyFileError(f"verifier key {path} is missing or not a regular file")
            text = path.read_bytes().decode()
        except UnicodeDecodeError:
            raise KeyFileError(f"verifier key {path} is not UTF-8 text") from None
        except OSError as exc:
            raise KeyFileError(f"verifier key {path}: {exc.strerror or exc}") from None
        if text.startswith("PRIVATE+KEY+"):
            raise KeyFileError(f"{path} is a private signing key, not a verifier key; give the .pub file")
        return cls.parse(text)

    def __str__(self) -> str:
        return f"{self.name}+{self.key_id.hex()}+{base64.b64encode(ALG_ED25519 + self.public).decode()}"

    def verifies(self, text: bytes, signature: bytes) -> bool:
        """Tells whether `signature` is this key's signature of `text`."""
        try:
            self._key.verify(signature, text)
        except InvalidSignature:
            return False
        return True


class Signer:
    """An Ed25519 signing key with its note name."""

    def __init__(self, name: str, key: Ed25519PrivateKey) -> None:
        self.name = name
        self._key = key
        public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.verifier = Verifier(name, public)

    @classmethod
    def generate(cls, name: str) -> Signer:
        """Creates a new random key.

        :raises KeyFileError: when the name is not valid in a signed note.
        """
        return cls(check_key_name(name), Ed25519PrivateKey.generate())

    def sign(self, data: bytes) -> bytes:
        """Returns the Ed25519 signature of `data` (a DSSE envelope's, audit/certification/certificate.py)."""
        return self._key.sign(data)

    def sign_line(self, text: bytes) -> str:
        """Returns the signature line of a note body."""
        sig = self.sign(text)
        return f"{SIG_PREFIX}{self.name} {base64.b64encode(self.verifier.key_id + sig).decode()}\n"

    def origin_key(self) -> bytes:
        """Returns the key of the writer's proofs of origin (ledger/segments.py): HKDF-SHA256 of the
        signing seed, domain-separated, so no signature and no proof can stand for one another."""
        seed = self._key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        return HKDF(SHA256(), 32, salt=b"matchledger/origin-proof/v1", info=self.name.encode()).derive(seed)

    def encoded(self) -> str:
        """Returns the C2SP signer key string `PRIVATE+KEY+<name>+<id>+<base64(0x01 ‖ seed)>`."""
        seed = self._key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        return f"PRIVATE+KEY+{self.name}+{self.verifier.key_id.hex()}+{base64.b64encode(ALG_ED25519 + seed).decode()}"

    def save(self, path: Path) -> None:
        """Writes the key readable by its owner only."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(self.encoded() + "\n")
            f.flush()
            os.fsync(f.fileno())

    @classmethod
    def load(cls, path: Path) -> Signer:
        """Reads a signer key, refusing one that anyone but its owner can read.

        :raises KeyFileError: when the file is missing, unsafe or malformed.
        """
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            raise KeyFileError(f"private key {path} is missing") from None
        if mode & 0o077:
            raise KeyFileError(f"private key {path} is accessible by others (mode {mode:o}); run chmod 600 {path}")
        try:
            parts = path.read_bytes().decode().strip().split("+", 4)
        except (UnicodeDecodeError, OSError) as exc:
            raise KeyFileError(f"private key {path} is not readable text: {exc}") from None
        if len(parts) != 5 or parts[:2] != ["PRIVATE", "KEY"]:
            raise KeyFileError(f"private key {path} is not a C2SP signer key")
        try:
            raw = base64.b64decode(parts[4], validate=True)
        except ValueError:
            raw = b""
        if raw[:1] != ALG_ED25519 or len(raw) != 33:
            raise KeyFileError(f"private key {path} is not an Ed25519 key")
        return cls(check_key_name(parts[2]), Ed25519PrivateKey.from_private_bytes(raw[1:]))


def sign_note(text: str, signer: Signer) -> str:
    """Returns a signed note: the body, a blank line and the signature line.

    :raises SignatureError: when the body is one Go's sumdb/note would refuse.
    """
    return check_note_text(text) + "\n" + signer.sign_line(text.encode())


def split_note(note: str) -> tuple[str, list[tuple[str, bytes]]]:
    """Splits a signed note into its body and its (name, key id ‖ signature) lines.

    :raises SignatureError: when the note is malformed.
    """
    body, sep, sigs = note.rpartition("\n\n")
    if not sep or not body:
        raise SignatureError("malformed note: no blank line before the signatures")
    lines = []
    for line in sigs.splitlines():
        if not line.startswith(SIG_PREFIX):
            raise SignatureError(f"malformed signature line {line[:40]!r}")
        name, _, b64 = line[len(SIG_PREFIX):].rpartition(" ")
        try:
            lines.append((name, base64.b64decode(b64, validate=True)))
        except ValueError:
            raise SignatureError(f"malformed signature of {name!r}") from None
    return body + "\n", lines


def add_signature(note: str, signer: Signer) -> str:
    """Returns the note with one more signature line (an arbiter's co-signature)."""
    body, _ = split_note(note)
    return note + signer.sign_line(body.encode())


def verify_note(note: str, verifier: Verifier) -> str:
    """Checks that the note carries a valid signature by `verifier` and returns its body.

    :raises SignatureError: when no such valid signature is present.
    """
    body, sigs = split_note(note)
    for name, blob in sigs:
        if name == verifier.name and blob[:4] == verifier.key_id:
            if verifier.verifies(body.encode(), blob[4:]):
                return body
            raise SignatureError(f"signature of {name!r} does not verify")
    raise SignatureError(f"note carries no signature by {verifier.name!r}")


def cosigners(note: str, witnesses: list[Verifier]) -> list[str]:
    """Returns the names of the known witnesses whose signature the note carries.

    :raises SignatureError: when a known witness's signature line does not verify.
    """
    body, sigs = split_note(note)
    signed = []
    for witness in witnesses:
        for name, blob in sigs:
            if name == witness.name and blob[:4] == witness.key_id:
                if not witness.verifies(body.encode(), blob[4:]):
                    raise SignatureError(f"co-signature of {name!r} does not verify")
                signed.append(name)
    return signed
