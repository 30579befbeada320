"""core.clock: okstra's timestamps are UTC ISO 8601 with a `Z`, parsed back to epoch seconds."""

from __future__ import annotations

import calendar
import re
import time

import pytest

from okstra.core.clock import now_iso, parse_iso

# 2026-11-30T14:05:12Z, computed without datetime (the thing under test uses it).
NOON_ISH = calendar.timegm((2026, 11, 30, 14, 5, 12))


@pytest.fixture
def tokyo(monkeypatch):
    """A machine whose local time is not UTC: a stored timestamp must read the same there."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_now_is_utc_with_milliseconds_and_a_z():
    before = time.time()
    stamp = now_iso()
    after = time.time()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp), stamp
    assert before - 0.001 <= parse_iso(stamp) <= after


def test_seconds_precision_drops_the_fraction():
    stamp = now_iso("seconds")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stamp), stamp
    assert parse_iso(stamp) == int(parse_iso(stamp))


def test_now_is_written_in_utc_on_a_machine_in_another_zone(tokyo):
    before = int(time.time())  # "seconds" truncates
    stamp = now_iso("seconds")
    after = time.time()
    assert stamp == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(parse_iso(stamp)))
    assert before <= parse_iso(stamp) <= after  # this instant, not shifted by the zone's 9 h


def test_a_stored_timestamp_reads_back_to_its_epoch_seconds():
    assert parse_iso("2026-11-30T14:05:12Z") == NOON_ISH
    assert parse_iso("2026-11-30T14:05:12.345Z") == pytest.approx(NOON_ISH + 0.345, abs=1e-6)


def test_an_explicit_offset_is_the_same_instant_as_its_utc_spelling():
    assert parse_iso("2026-11-30T16:05:12+02:00") == NOON_ISH
    assert parse_iso("2026-11-30T14:05:12+00:00") == NOON_ISH
    assert parse_iso("2026-11-30T09:05:12-05:00") == NOON_ISH


def test_a_timestamp_without_an_offset_is_read_as_utc_whatever_the_machines_zone(tokyo):
    assert parse_iso("2026-11-30T14:05:12") == NOON_ISH
    assert parse_iso("2026-11-30T14:05:12Z") == NOON_ISH


def test_what_now_writes_parses_back_to_the_same_text():
    stamp = now_iso()
    seconds = parse_iso(stamp)
    millis = round((seconds % 1) * 1000)
    assert time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z" == stamp


@pytest.mark.parametrize("value", [None, ""])
def test_an_absent_timestamp_is_none(value):
    assert parse_iso(value) is None


@pytest.mark.parametrize(
    "value",
    ["yesterday", "Z", "2026-13-01T00:00:00Z", "2026-11-31T00:00:00Z", "2026-11-30T25:00:00Z", "14:05:12"],
)
def test_text_that_is_not_a_timestamp_is_none(value):
    assert parse_iso(value) is None


@pytest.mark.parametrize("value", [5, 1796047512.0, ["2026-11-30T14:05:12Z"], {"at": "x"}, True])
def test_a_hand_edited_value_of_another_type_is_not_a_timestamp(value):
    # A team-state record is not schema-checked when loaded: startedAt may be anything a person wrote.
    assert parse_iso(value) is None
