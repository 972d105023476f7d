"""Generates the JSON Schema of the event contract into `schemas/json/` (run `python -m schemas.jsonschema`)."""

from __future__ import annotations

from pathlib import Path

import msgspec

OUT = Path(__file__).parent / "json"
FILE = "events.schema.json"


def render() -> bytes:
    """Returns the JSON Schema document of every event kind, formatted and stable."""
    from schemas import AnyEvent

    schema = msgspec.json.schema(AnyEvent)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "matchledger event"
    return msgspec.json.format(msgspec.json.encode(schema, order="sorted"), indent=2) + b"\n"


def write(out: Path = OUT) -> Path:
    """Writes the schema file and returns its path."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / FILE
    path.write_bytes(render())
    return path


if __name__ == "__main__":
    print(write())
