"""Named rule profiles of paohuzi (paohuzi.md §9, §12): regional parameter sets found by name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from replay.protocol import InvalidActionError
from schemas.paohuzi import PaohuziProfile

DEFAULT = PaohuziProfile()
"""The parameter set of §12 (its 名堂 table is the first listed, 常德全名堂)."""

PROFILES: dict[str, PaohuziProfile] = {
    "default": DEFAULT,
    "changde_quan": PaohuziProfile(mingtang_table="changde_quan"),
    "changde_hhd": PaohuziProfile(mingtang_table="changde_hhd"),
    # 宁乡 (S3): money steps 15–17 → 10, 18–20 → 15 …, no 自摸 bonus, 名堂 added.
    "ningxiang": PaohuziProfile(mingtang_table="ningxiang", tun_formula="ningxiang_money", zimo_mode="none"),
    "shaoyang": PaohuziProfile(mingtang_table="shaoyang"),
}


def profile_named(name: str) -> PaohuziProfile:
    """Returns the named profile.

    :raises InvalidActionError: for an unknown name, listing the known ones.
    """
    try:
        return PROFILES[name]
    except KeyError:
        raise InvalidActionError(f"unknown paohuzi profile {name!r}; known: {', '.join(PROFILES)}") from None


def with_settings(profile: PaohuziProfile, settings: Sequence[str]) -> PaohuziProfile:
    """Returns the profile with `FIELD=VALUE` settings applied (a value is read as JSON, else as text).

    :raises InvalidActionError: for a setting without `=`, an unknown field or a value the field refuses.
    """
    changes: dict[str, Any] = {}
    for text in settings:
        field, sep, value = text.partition("=")
        if not sep:
            raise InvalidActionError(f"a setting is FIELD=VALUE, got {text!r}")
        changes[field.strip()] = _value(value.strip())
    try:
        return msgspec.convert({**msgspec.to_builtins(profile), **changes}, PaohuziProfile)
    except msgspec.ValidationError as exc:
        raise InvalidActionError(f"bad paohuzi setting: {exc}") from None


def _value(text: str) -> Any:
    """Reads a setting's value: JSON (`15`, `false`, `{"peng": [1, 3]}`), else the text itself (`hu_first`)."""
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError:
        return text
