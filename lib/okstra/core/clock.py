"""Timestamps as okstra stores them: UTC ISO 8601 with a `Z`, parsed back to epoch seconds."""

from __future__ import annotations

from datetime import UTC, datetime


def now_iso(timespec: str = "milliseconds") -> str:
    """Now, e.g. `2026-11-30T14:05:12.345Z` (`timespec="seconds"` drops the fraction)."""
    return datetime.now(UTC).isoformat(timespec=timespec).replace("+00:00", "Z")


def parse_iso(value: str | None) -> float | None:
    """Epoch seconds of a stored timestamp; None when absent or not a timestamp."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
