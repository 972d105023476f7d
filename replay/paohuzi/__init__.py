"""竞技跑胡子 (Paohuzi) engine: the rules of `shared/rules/paohuzi.md`, replay, bot, pictures.

Public entry points:
- `ENGINE`: the `GameEngine` (replay, legal actions, bot_game, render_svg/render_text).
- `play_board(start, deck, rng, salt=None)`: one table's deal of a duplicate board (deck order given).
- `check_board_deals(tables)`: findings for tables of one board whose deals differ (第五条).
- `hu_report(hand, melds, win, source, profile, …)`: the `matchledger hu` report of one hand;
  `game_hu_report(state, seat, …)`: the same for a seat of a recorded deal at one step.
- `PROFILES`, `profile_named(name)`: the named regional rule profiles; `commitment(deck, salt)`.

Why `State` is a mutable class "frozen by contract" (issue 29 point 8, measured 2026-12-04): mypyc
compiles it to a native class whose fields the compiled rules read directly, and a transition makes
one `copy()` where a frozen msgspec Struct needed up to five `structs.replace`. The compiled build
replays 3.8 times as many actions per second as the sources (bench/replay_paohuzi.py, 100 deals,
niced, load about 7: 71.6 k against 18.8 k actions/s; ratio to python-chess 0.92 against 0.32), and
the native class is 13.9 % of the compiled build's instructions (771.5 → 664.3 M, bench/README.md,
2026-12-02 pz-state): the margin that takes the ratio from 1.00 to 1.15 on a quiet machine, above
the replay bar. Kept, because no other lever of that size is left and the contract is held by a
test (tests/test_paohuzi_rules.py::test_every_transition_of_bot_deals_leaves_its_input_as_it_was
fails when a transition changes its input). Revisit if mypyc learns to read Struct fields natively.

Why the fold's handlers leave `facts` alone (issue 29 point 4, measured 2026-12-04): the one
handler shape of the checkers and Junqi folds with handlers that fill the step's facts dict (commit
778c2f3) replayed about 5 % slower compiled, beyond the unchanged build's spread, and was reverted.
The shape kept (a `_HANDLERS` table of `(state, event, fold, facts) -> state`, findings only through
`_Fold.find`) has the handlers put their own facts on the fold, and the step's facts are built at
once from them and the state after it (`_StateFacts`), as with the earlier integer-kind dispatch:
compiled (d007304, taking turns with the unchanged build), bench/replay_paohuzi.py gave 178.1–181.5 k
actions/s against 174.7–182.8 k, and the process time of the bench's 200 deals 48.8–50.5 ms (one run
57.0 at load 2.6) against 48.8–51.5 ms: within the unchanged build's spread (bench/README.md).
"""

from replay import _compiled  # noqa: F401  (first: picks the compiled build or the sources)
from replay.paohuzi.bot import bot_game, play_board
from replay.paohuzi.deals import check_board_deals, commitment
from replay.paohuzi.engine import ENGINE, PaohuziEngine
from replay.paohuzi.profiles import DEFAULT, PROFILES, profile_named
from replay.paohuzi.report import game_hu_report, hu_report, parse_melds

__all__ = [
    "DEFAULT", "ENGINE", "PROFILES", "PaohuziEngine", "bot_game", "check_board_deals", "commitment",
    "game_hu_report", "hu_report", "parse_melds", "play_board", "profile_named",
]
