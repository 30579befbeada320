"""JSON Schemas (2020-12): loaded once per process, errors with their JSON paths.

jsonschema is imported inside the functions that need it, so modules on the
write-guard hot path can import this module's callers without paying for it.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from okstra.core import home
from okstra.core.errors import StateError

SCHEMA_DIR = home.ROOT / "schemas"


def path_of(name: str) -> Path:
    return SCHEMA_DIR / f"{name}.schema.json"


@functools.cache
def validator(name: str) -> Any:
    from jsonschema import Draft202012Validator

    schema = json.loads(path_of(name).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def _message(error: Any) -> str:
    """A failed `pattern` says what the field expects (the schema's `x-expected`), not the regex."""
    expected = error.schema.get("x-expected") if isinstance(error.schema, dict) else None
    if error.validator == "pattern" and expected:
        return f"{error.instance!r} is not {expected}"
    return error.message


def _position(path: Any) -> list[tuple[int, str]]:
    """A JSON path as a sort key: list items by their index (`[2]` before `[10]`), keys by name."""
    return [(part, "") if isinstance(part, int) else (-1, str(part)) for part in path]


def problems(name: str, document: Any) -> list[str]:
    """Every violation, one `<json path>: <message>` line each, in document order."""
    found = sorted(validator(name).iter_errors(document), key=lambda e: (_position(e.absolute_path), e.message))
    return [f"{e.json_path}: {_message(e)}" for e in found]


def check_state(name: str, document: Any, source: str) -> None:
    """Refuse an invalid state document with exit 2, naming the file and the first problems."""
    found = problems(name, document)
    if found:
        more = f" (+{len(found) - 3} more)" if len(found) > 3 else ""
        raise StateError(f"{source}: not a valid {name} document: {'; '.join(found[:3])}{more}")
