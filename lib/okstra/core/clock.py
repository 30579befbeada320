"""Timestamps as okstra stores them: UTC ISO 8601 with a `Z`, parsed back to epoch seconds."""

from __future__ import annotations

from datetime import UTC, datetime


def now_iso(timespec: str = "milliseconds") -> str:
    """Now, e.g. `2026-11-30T14:05:12.345Z` (`timespec="seconds"` drops the fraction)."""
    return datetime.now(UTC).isoformat(timespec=timespec).replace("+00:00", "Z")


def parse_iso(value: object) -> float | None:
    """Epoch seconds of a stored timestamp; None when absent or not a timestamp.

    A record is not schema-checked when loaded, so a hand-edited value may be of any type
    (None, not a crash). A timestamp without an offset is read as UTC, as okstra writes
    them: read as local time, the same file would give another instant on each machine.
    """
    if not value or not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()
