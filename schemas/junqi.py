"""Events and rule profile of junqi (see `shared/rules/junqi.md`)."""

from __future__ import annotations

from schemas.profiles import Profile


class JunqiProfile(Profile, frozen=True, kw_only=True, forbid_unknown_fields=True, tag="junqi"):
    """Rule profile of junqi: every [PARAM] of `shared/rules/junqi.md` with its default."""


EVENTS: tuple[type, ...] = ()
