"""Memos of pure work on okstra's own inputs, in `$OKSTRA_ROOT/cache/<kind>/` (DESIGN §13).

Every run command reads the provider catalog, and team-dispatch starts sixteen
worker-runs at once on two cores: parsing its YAML and importing jsonschema to
check it were most of their start-up. A memo keeps such a result.

- A memo is named by the sha256 of everything its value depends on (`key`), so
  a changed input misses and the work is done again; nothing is invalidated.
- Its value is sealed (`core.seal`): a memo changed by hand is not believed, and
  the work is done again (DESIGN §14).
- Writing is best effort: a cache that cannot be written only costs the next
  call its speed. Each kind keeps its newest `LIMIT` memos.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from okstra.core import fsio, seal, settings
from okstra.core.errors import OkstraError

LIMIT = 64


def key(*parts: bytes) -> str:
    """The name of the memo of work that depends on exactly `parts`."""
    return seal.sha256_hex(b"\0".join(parts))


def _path(kind: str, name: str) -> Path:
    return settings.current().root.expanduser() / "cache" / kind / f"{name}.json"


def recall(kind: str, name: str) -> tuple[bool, Any]:
    """(True, value) when a sound memo `name` of `kind` exists, else (False, None)."""
    try:
        raw = json.loads(_path(kind, name).read_bytes())
        return True, seal.open_json(raw, "memo", "")["value"]
    except (OSError, ValueError, KeyError, TypeError, OkstraError):
        return False, None


def keep(kind: str, name: str, value: Any) -> None:
    """Keep `value` (JSON data) as memo `name` of `kind`, and drop that kind's oldest beyond LIMIT."""
    path = _path(kind, name)
    try:
        fsio.write_json(path, seal.seal_json({"value": value}))
        kept = sorted(path.parent.iterdir(), key=lambda p: p.stat().st_mtime_ns)
        for old in kept[:-LIMIT]:
            old.unlink(missing_ok=True)
    except (OSError, ValueError, TypeError, OkstraError):
        pass
