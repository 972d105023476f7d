"""Rule profiles: every `[PARAM]` of `shared/rules/*.md` as a setting with its default.

The profile in force is recorded in `tournament.opened` and `game.started`, so a replay uses
exactly the rules the game was played under. Each game's profile lives beside its events and
is tagged by the game's name in the `game` field.
"""

from __future__ import annotations

import msgspec


class Profile(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="game"):
    """Base of every game's rule profile."""
