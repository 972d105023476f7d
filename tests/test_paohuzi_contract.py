"""The shared engine contract (tests/engine_contract.py) run over the paohuzi engine and its named profiles."""

from __future__ import annotations

import pytest

from replay.paohuzi import ENGINE, PROFILES
from replay.registry import engine
from tests.engine_contract import check_engine
from tests.paohuzi_support import start_event


def test_registry_finds_the_engine() -> None:
    """replay/registry.py: `engine("paohuzi")` returns this package's ENGINE."""
    assert engine("paohuzi") is ENGINE


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_contract(profile: str) -> None:
    """Contract: bot deals replay clean, random playouts stay legal, no mutation, replay reproduces state."""
    for dealer in range(3):
        check_engine(ENGINE, start_event(profile, dealer=dealer), seed=7 + dealer)
