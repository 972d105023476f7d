"""Events of arbitration (Junqi 第六章 第十八–十九条, 第十三条 三, 第十四条; checkers 第十二条): the arbiters
the ledger knows, appeals (申诉) and the committee's decisions, and the rules of the procedure.

Rulings themselves are `game.ruling` events (schemas/common.py). A ruling and a decision carry the
signature of an arbiter registered here; the recorder does not check it (a bad signature is evidence),
the audit does."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from schemas.envelope import Event, PlayerId, SeqNo, StreamId

ARBITER_STREAM = "log.arbiters"
"""The stream of the arbiters' keys. Only the ledger's recorder appends to a ledger, so a key there
was registered by the ledger's owner, and the signed checkpoints cover it."""
Hours = Annotated[int, msgspec.Meta(ge=0, le=10_000)]
Signature = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
KeyName = Annotated[str, msgspec.Meta(min_length=1, max_length=100)]


class ArbitrationRules(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The appeal procedure's settings with the rule book's defaults (Junqi 第十八–十九条, 第十三条 三)."""

    event_type: Literal["online", "venue"] = "online"
    """非限定场地赛 (online: players on their own devices) or 限定场地赛 (venue), 第十一条: it sets the appeal window."""
    appeal_window_online_h: Hours = 24
    """Hours after the game's end within which an appeal of an online event must be filed (第十八条 2)."""
    appeal_window_venue_h: Hours = 3
    """Hours after the game's end within which an appeal at a venue must be filed (第十八条 2)."""
    appeal_window: Literal["game_book", "hours", "next_round"] = "game_book"
    """When the appeal window closes: `hours` after the game's end (the two settings above), or at the
    start of the next round (`next_round`: the checkers sheet, item 11, 下轮开赛前; a last round has no
    next round and takes the hours); `game_book` takes each game's own book: checkers next_round,
    Junqi hours (第十八条 2), Paohuzi hours (its seed names no window: the Junqi book's is taken, the
    rules of the same national body, with the same committee and 申诉 procedure) [INF]."""
    committee_min: Annotated[int, msgspec.Meta(ge=1)] = 3
    """The smallest arbitration committee: an odd number, at least three (第十三条 三)."""
    decision_days: Annotated[int, msgspec.Meta(ge=0)] = 2
    """Days the committee has to decide, counted from the filing (第十九条 1: 2 个工作日)."""
    decision_day_basis: Literal["working", "calendar"] = "working"
    """`working`: Saturdays and Sundays do not count (the book's 工作日; public holidays are not known
    to the auditor); `calendar`: every day counts."""
    utc_offset_minutes: Annotated[int, msgspec.Meta(ge=-720, le=840)] = 480
    """The event's time zone, in which a working day starts and ends (China: UTC+8)."""
    void_board: Literal["exclude"] = "exclude"
    """A voided game leaves its board's MP comparison: the other tables compare among themselves and
    its players have no rate for that board (R averages the boards played, 附录二) [INF]."""

    def appeal_window_ms(self) -> int:
        """Returns the appeal window of this event type in milliseconds."""
        hours = self.appeal_window_online_h if self.event_type == "online" else self.appeal_window_venue_h
        return hours * 3_600_000


class ArbiterRegistered(Event, frozen=True, kw_only=True, tag="arbiter.registered"):
    """An arbiter's verifier key (a `keygen` key, C2SP form) is known to the ledger, with the role it
    signs in: a referee or the chief referee (裁判长, who rules and corrects results, 第十四条) or a
    member of the arbitration committee (仲裁委员会, which decides appeals, 第十三条 三)."""

    verifier: Annotated[str, msgspec.Meta(min_length=1, max_length=300)]
    role: Literal["referee", "chief_referee", "committee"]
    name: Annotated[str, msgspec.Meta(max_length=200)] | None = None


class AppealFiled(Event, frozen=True, kw_only=True, tag="appeal.filed"):
    """A player appeals (申诉, 第十六条 一, 第十八条) in writing: the game, or a ruling in it, and the
    grounds. Recorded in the tournament's stream at the time it was filed (the event's `ts`)."""

    player: PlayerId
    game: StreamId
    ruling: SeqNo | None = None
    """The seq of the `game.ruling` in that game the appeal is against, if it is against one."""
    grounds: Annotated[str, msgspec.Meta(min_length=1, max_length=4000)]


class Vote(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One committee member's vote on an appeal."""

    member: KeyName
    vote: Literal["uphold", "reject", "void"]


DECISIONS = {"upheld": ("申诉成立", "upheld"), "rejected": ("申诉驳回", "rejected"), "void_late": ("逾期无效", "void as late")}
"""A committee's decisions (`AppealDecided.decision`) in Chinese and English: the pages' and the terminal's
words (audit/presentation/terms.py), the appeal checks' (the `decision_words` table) and `appeal decide`'s choices."""


class AppealDecided(Event, frozen=True, kw_only=True, tag="appeal.decided"):
    """The arbitration committee's decision on an appeal of the same stream (第十九条): upheld,
    rejected, or void as filed too late (第十八条 2), with every member's vote and the decision's
    text; final (第十三条 三). Signed by a committee member's registered key."""

    appeal: SeqNo
    decision: Literal["upheld", "rejected", "void_late"]
    votes: list[Vote]
    text: Annotated[str, msgspec.Meta(min_length=1, max_length=4000)]
    arbiter: KeyName | None = None
    signature: Signature | None = None


class Ref(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """An event of the log named by its stream and sequence number."""

    stream: StreamId
    seq: SeqNo


EVENTS: tuple[type[Event], ...] = (ArbiterRegistered, AppealFiled, AppealDecided)
