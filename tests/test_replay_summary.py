"""`matchledger replay`'s totals (replay.run.summarise, which folds each game without keeping its
steps) agree with the per-game replays the projection keeps (replay.run.replay_game): games,
events, moves (steps with an action) and findings, in stream order, on seeded bot games of every
game with rule breaks spliced in, and from the command line on a recorded ledger."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from audit.simulator.simulate import simulate_games
from ledger import init
from replay.registry import GAMES
from replay.run import game_streams, replay_game, summarise
from schemas.envelope import Event
from tests.ledger_support import cli
from tests.replay_support import bot_games

SEED = 2026


def _games(seed: int) -> list[Event]:
    """Returns two seeded bot games of each game, interleaved, with one event of each second game
    sent twice with a later seq (a rule break every engine reports: its seq or turn is wrong)."""
    rng = random.Random(seed)
    print(f"seed {seed}")
    events: list[Event] = [event for played in bot_games(rng) for event in played]
    rng.shuffle(events)  # grouping restores each stream's order
    return events


def test_summary_adds_up_the_per_game_replays() -> None:
    events = _games(SEED)
    replays = [replay_game(items) for items in game_streams(events)]
    summary = summarise(events)
    assert summary.games == len(replays) == 2 * len(GAMES)
    assert summary.events == sum(len(r.step_facts) for r in replays)
    assert summary.moves == sum(r.moves for r in replays) > 0
    assert summary.findings == [f for r in replays for f in r.findings]
    assert summary.findings, "the spliced events must be reported"


def test_summary_of_one_game() -> None:
    events = _games(SEED)
    stream = "T1/r1/t1/checkers"
    (items,) = [items for items in game_streams(events) if items[0].stream == stream]
    summary = summarise(events, stream)
    replayed = replay_game(items)
    assert (summary.games, summary.events, summary.moves, summary.findings) == (1, len(replayed.step_facts), replayed.moves,
                                                                                replayed.findings)


@pytest.mark.parametrize("game", GAMES)
def test_replay_command_reports_the_per_game_totals(tmp_path: Path, game: str) -> None:
    root = tmp_path / "ledger"
    init(root)
    simulate_games(root, game, 2, seed=SEED)
    from ledger import LogReader

    replays = [replay_game(items) for items in game_streams(LogReader(root).events())]
    result = cli("replay", "--ledger", str(root), "--json")
    findings = sum(len(r.findings) for r in replays)
    assert result.exit_code == (1 if findings else 0), result.output
    out = json.loads(result.stdout)
    assert (out["games"], out["events"], out["moves"], len(out["findings"])) == (
        2, sum(len(r.step_facts) for r in replays), sum(r.moves for r in replays), findings)
