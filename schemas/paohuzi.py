"""Events and rule profile of paohuzi (see `shared/rules/paohuzi.md`)."""

from __future__ import annotations

from schemas.profiles import Profile


class PaohuziProfile(Profile, frozen=True, kw_only=True, forbid_unknown_fields=True, tag="paohuzi"):
    """Rule profile of paohuzi: every [PARAM] of `shared/rules/paohuzi.md` with its default."""


EVENTS: tuple[type, ...] = ()
