"""Events and rule profile of checkers (see `shared/rules/checkers.md`)."""

from __future__ import annotations

from schemas.profiles import Profile


class CheckersProfile(Profile, frozen=True, kw_only=True, forbid_unknown_fields=True, tag="checkers"):
    """Rule profile of checkers: every [PARAM] of `shared/rules/checkers.md` with its default."""


EVENTS: tuple[type, ...] = ()
