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


def template_cache() -> Any:
    """A Jinja2 bytecode cache whose compiled templates are memos (kind "jinja2"): the HTML
    view's template took 0.1 s to compile on every render. Jinja2's own file cache reads
    its files with pickle; here a compiled template is marshalled code in a sealed memo,
    named by the template's source checksum, Jinja2's version and Python's bytecode magic."""
    import base64
    import importlib.util
    import marshal

    import jinja2

    def name_of(bucket: Any) -> str:
        return key(
            b"jinja2", jinja2.__version__.encode(), importlib.util.MAGIC_NUMBER, bucket.key.encode(), bucket.checksum.encode()
        )

    class MemoBytecodeCache(jinja2.BytecodeCache):
        def load_bytecode(self, bucket: Any) -> None:
            found, value = recall("jinja2", name_of(bucket))
            if found and isinstance(value, str):
                try:
                    bucket.code = marshal.loads(base64.b64decode(value))
                except (ValueError, EOFError, TypeError):
                    bucket.reset()

        def dump_bytecode(self, bucket: Any) -> None:
            keep("jinja2", name_of(bucket), base64.b64encode(marshal.dumps(bucket.code)).decode("ascii"))

    return MemoBytecodeCache()
