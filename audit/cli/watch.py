"""`matchledger watch`: an arbiter's terminal on a live audit, printing each finding as the service
publishes it."""

from __future__ import annotations

from typing import Annotated

import typer

from audit.cli.base import ExitCode, JsonOpt, command
from audit.presentation.output import emit_json, fail, fail_note, say

EXIT_INTERRUPTED = 130
"""Ctrl-C: the shell's code for a command stopped by SIGINT."""


@command
def watch(
    url: Annotated[str, typer.Option("--url", help="The service's base URL (its stream is URL/live), e.g. http://127.0.0.1:8080.")],
    since: Annotated[int, typer.Option("--since", min=0, help="Print the findings numbered after this one (0: all).")] = 0,
    json_: JsonOpt = False,
) -> None:
    """Prints a live audit's findings as `matchledger serve` publishes them: the game, rule code and
    article, stream, seq, seat and player. A dropped connection is resumed after the last finding
    printed; Ctrl-C stops (exit 130) and says where to resume.

    Example: matchledger watch --url http://127.0.0.1:8080 --since 40
    """
    import msgspec

    from audit.live.watch import WatchError, follow
    from audit.presentation.render import finding_said

    last = since
    try:
        for finding in follow(url, since, on_retry=lambda why, wait: fail_note(f"{why}; reconnecting in {wait:g} s")):
            if json_:
                emit_json(finding)
            else:
                say(finding_said(msgspec.structs.asdict(finding)))  # the one finding line of every command
            last = finding.id
    except WatchError as exc:
        fail(str(exc))
        raise ExitCode(1) from None
    except KeyboardInterrupt:
        fail_note(f"stopped after finding {last} (resume with --since {last})")
        raise ExitCode(EXIT_INTERRUPTED) from None
