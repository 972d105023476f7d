"""The event contract: canonical encoding, strict decoding with line and field, and the generated JSON Schema."""

from __future__ import annotations

import msgspec
import pytest

import schemas
from schemas import jsonschema
from schemas.codec import ContractError, decode_line
from schemas.common import GameStarted

GOOD = b'{"kind":"game.resigned","stream":"g1","seq":3,"ts":5,"seat":1}'


def test_json_schema_file_is_current() -> None:
    """Regenerate with `python -m schemas.jsonschema` when this fails."""
    assert (jsonschema.OUT / jsonschema.FILE).read_bytes() == jsonschema.render()


def test_canonical_bytes_are_stable_under_reencoding() -> None:
    event, data = decode_line(GOOD, 1)
    assert data == b'{"kind":"game.resigned","stream":"g1","seq":3,"ts":5,"seat":1,"v":1}'
    assert schemas.encode(schemas.decode(data)) == data
    assert event.kind == "game.resigned"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b'{"kind":"game.resigned",', "第 7 行 line 7: malformed JSON: Input data was truncated"),
        (b'{"kind":"nope","stream":"g","seq":0,"ts":1}', "第 7 行 line 7: Invalid value 'nope' - at `$.kind`"),
        (b'{"kind":"game.resigned","stream":"g","seq":0,"ts":1,"foo":1}', "第 7 行 line 7: Object contains unknown field `foo` - at `$`"),
        (b'{"kind":"game.resigned","stream":"g","seq":"0","ts":1}', "第 7 行 line 7: Expected `int`, got `str` - at `$.seq`"),
        (b'{"kind":"game.resigned","stream":"g","seq":0}', "第 7 行 line 7: Object missing required field `ts` - at `$`"),
        (b'{"kind":"game.resigned","stream":"g","seq":-1,"ts":1}', "第 7 行 line 7: Expected `int` >= 0 - at `$.seq`"),
        (b'{"kind":"game.penalty","stream":"g","seq":0,"ts":1,"seat":0,"card":"blue","reason":"x"}',
         "第 7 行 line 7: Invalid enum value 'blue' - at `$.card`"),
        (b'{"kind":"game.resigned","stream":"g 1","seq":0,"ts":1}',
         "第 7 行 line 7: Expected a stream id: letters, digits and `._:/-`, starting with a letter or digit, no `.` or `..` segment, "
         "no line break (流标识不合规) - at `$.stream`"),
        (b'{"kind":"junqi.moved","stream":"g","seq":0,"ts":1,"seat":0,"from":"S71","to":"S61"}',
         "第 7 行 line 7: Invalid enum value 'S71' - at `$.from`"),
    ],
    ids=["malformed", "unknown-kind", "unknown-field", "wrong-type", "missing-field", "negative-seq", "bad-enum",
         "bad-stream-id", "bad-junqi-point"],
)
def test_contract_errors_name_line_and_field(line: bytes, message: str) -> None:
    with pytest.raises(ContractError) as info:
        decode_line(line, 7)
    assert str(info.value) == message


def test_stored_entries_decode_in_one_call_under_the_same_contract() -> None:
    """decode_stored (the audit's bulk path) accepts what decode accepts and refuses a bad stream id,
    whose pattern the codec checks once per stream rather than msgspec on every event."""
    good = [GOOD, GOOD.replace(b'"seq":3', b'"seq":4')]
    assert [e.seq for e in schemas.decode_stored(good)] == [3, 4]
    assert schemas.decode_stored([]) == []
    with pytest.raises(msgspec.ValidationError, match=r"at `\$.stream`"):
        schemas.decode_stored([GOOD, GOOD.replace(b'"g1"', b'"-g1"')])


def test_seat_held_by_player_or_program_not_both() -> None:
    """人机赛: an AI seat names its program and version instead of a player."""
    ok = b'{"seat":1,"program":{"name":"junqi-ai","version":"2.1"}}'
    line = (b'{"kind":"game.started","stream":"g","seq":0,"ts":1,"first":0,"profile":{"game":"checkers"},'
            b'"seats":[{"seat":0,"player":"P1"},' + ok + b']}')
    event, _ = decode_line(line, 1)
    assert isinstance(event, GameStarted)
    assert [s.holder for s in event.seats] == ["P1", "junqi-ai@2.1"]
    both = line.replace(b'"program"', b'"player":"P2","program"')
    with pytest.raises(ContractError, match=r"exactly one of `player` or `program` - at `\$.seats\[1\]`"):
        decode_line(both, 1)


def test_oversized_event_is_refused() -> None:
    big = b'{"kind":"game.penalty","stream":"g","seq":0,"ts":1,"seat":0,"card":"red","reason":"' + b"x" * 3000 + b'"}'
    with pytest.raises(ContractError, match=r"^第 2 行 line 2: event is \d+ bytes, over the limit of 1024$"):
        decode_line(big, 2, max_bytes=1024)


def _started(game_no: int, board: str | None = None) -> bytes:
    """A game.started line in its canonical encoding (built, not decoded: no bound is checked)."""
    from schemas.checkers import CheckersProfile
    from schemas.common import GameStarted
    from schemas.envelope import SeatHolder

    event = GameStarted(stream="g", seq=0, ts=1, first=0, profile=CheckersProfile(), seats=[SeatHolder(seat=0, player="P1")],
                        game_no=game_no, board=board)
    return schemas.encode(event)


def test_a_canonical_line_is_refused_an_integer_outside_int64() -> None:
    """Threat: an integer SQL engines cannot hold (2^63 and up), sent in a line that is its own
    canonical encoding, the path that parses a line once. The nineteen-digit scan still sends it to
    the second parse, which refuses it naming the line; 19 digits in range or in a string pass."""
    line = _started(2**63)
    assert schemas.encode(schemas.decode(line)) == line  # its own canonical encoding: msgspec takes 2^63 as it is
    with pytest.raises(ContractError, match=r"^第 4 行 line 4: Integer 9223372036854775808 is outside the 64-bit range - at `\$`$"):
        decode_line(line, 4)
    for fine in (_started(2**63 - 1), _started(1, board="1234567890123456789")):
        assert decode_line(fine, 1)[1] == fine


@pytest.mark.parametrize("seed", range(3))
def test_the_digit_scan_finds_what_the_pattern_found(seed: int) -> None:
    """The nineteen-digit scan (bytes.translate, issue 29) says what the regex `[0-9]{19}` it
    replaced said, on runs of digits of every length beside every kind of byte."""
    import random
    import re

    from schemas import codec

    pattern, chance, found = re.compile(rb"[0-9]{19}"), random.Random(seed), 0
    for _ in range(2000):
        data = bytes(chance.choice(b"0123456789" * 6 + b'a:",9\xe4 ') for _ in range(chance.randrange(0, 60)))
        assert (codec._LONG_NUMBER in data.translate(codec._DIGITS)) == bool(pattern.search(data)), data
        found += bool(pattern.search(data))
    assert 0 < found < 2000  # both answers were asked for
