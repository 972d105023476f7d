"""The rule profile (junqi.md §12): every [PARAM] is a setting with its documented default, and the
profile travels in game.started so a replay uses the rules the game was played under."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

import schemas
from schemas.junqi import JunqiProfile
from tests.junqi_support import start

DATA = Path(__file__).parent / "data" / "junqi"
DEFAULTS = json.loads((DATA / "profile_defaults.json").read_text(encoding="utf-8"))["defaults"]


def test_every_param_of_section_12_has_its_default() -> None:
    """§12: the profile's fields and defaults are exactly the parameter schema."""
    assert msgspec.to_builtins(JunqiProfile()) == {"game": "junqi", **DEFAULTS}


def test_profile_travels_in_game_started() -> None:
    """DESIGN schemas/: the profile in force is recorded in game.started and decoded back unchanged."""
    event = start(quiet_limit=70, turn_direction="counterclockwise", max_steps=512)
    assert schemas.decode(schemas.encode(event)) == event


@pytest.mark.parametrize("bad", [{"quiet_limit": 0}, {"turn_direction": "sideways"}, {"colour_rule": 1}])
def test_profile_rejects_bad_settings(bad: dict) -> None:  # type: ignore[type-arg]
    """§12: enumerated settings accept only their listed values; unknown settings are refused."""
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"game": "junqi", **bad}, JunqiProfile)
