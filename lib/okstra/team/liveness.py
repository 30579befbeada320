"""Is a worker alive, done or dead? `assess` one dispatch; `probe` and `wait` a selection (DESIGN §5).

Unhealthy means one of:
- no liveness artifact within the launch grace,
- the artifact idle longer than the max idle time,
- the process gone (pid dead, a zombie, or the pid reused by another process:
  the recorded start time differs) while the record is not terminal,
- a terminal status other than `completed`, or `completed` without a result,
- **retrying**: the provider has been retrying for the retry window (default
  30 s) with no progress since its first retry (a 429 being retried for minutes
  looks alive to the wrapper). One reconnect, or a burst of them, followed by
  normal output is healthy: the real codex prints `Reconnecting... n/5` and may
  carry on and succeed,
- **stalled**: a streaming provider printed no event for the idle window
  (default 180 s, apart from the launch grace): a hung request is seen long
  before a wait's timeout. Both come from the provider's own events, which
  worker-run writes into the heartbeat (`lastActivityAt`, `lastEvent`, and
  `retrying`: the current run of retries, since when and how many).

**Every grace counts from the dispatch's own clock** — `startedAt`, or for a
pending dispatch `dispatchedAt` — never from an artifact's modification time
alone: an artifact older than that clock belongs to an earlier attempt and
is ignored, so a re-dispatched worker that inherits old files is not stale.

`wait` sleeps on `inotify.FolderWatch` (the team-state and result folders),
so a landed result is noticed within milliseconds; it re-assesses once a
second for idle and dead workers. Whether a recorded pid is still its process
is `processes.matches`. The answer is a verdict; worker-wait turns it into an
exit code.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from okstra.core import paths
from okstra.core.clock import parse_iso
from okstra.core.errors import InputError, RefusedError
from okstra.model import team_state
from okstra.model.dispatch import COMPLETED, IN_PROGRESS, PENDING, Dispatch
from okstra.model.layout import Run, RunLayout
from okstra.team import inotify, processes

DEFAULT_MAX_IDLE = 120.0
DEFAULT_LAUNCH_GRACE = 30.0
DEFAULT_IDLE_WINDOW = 180.0  # seconds a streaming provider may print no event before it counts as stalled
# Seconds a provider may go on retrying, with no progress since its first retry, before it
# counts as retrying (DESIGN §5): longer than codex's whole reconnect budget (~27 s).
DEFAULT_RETRY_WINDOW = 30.0
DEFAULT_TIMEOUT = 1800.0
REASSESS_EVERY = 1.0  # seconds between re-assessments while inotify is quiet
CLOCK_SLACK = 1.0  # an artifact this much older than the clock still counts (coarse mtimes)


# -- one dispatch ---------------------------------------------------------------


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


@dataclass(frozen=True)
class Health:
    """The verdict on one dispatch, with the evidence it rests on."""

    worker_id: str
    attempt: int
    status: str
    healthy: bool
    done: bool  # terminal completed and the recorded result file holds the answer
    reason: str
    started_at: str | None = None
    clock: str | None = None  # which record field the graces count from
    seconds_since_clock: float | None = None
    liveness_artifact: str | None = None
    heartbeat_age: float | None = None  # seconds since the artifact changed (only if newer than the clock)
    pid: int | None = None
    pid_alive: bool | None = None
    exit_code: int | None = None
    result_path: str | None = None
    result_size: int | None = None
    result_mtime: str | None = None
    record_reason: str | None = None
    last_activity_at: str | None = None  # the provider's last event (not the wrapper's beat)
    last_event: str | None = None
    provider_idle: float | None = None  # seconds since that event (or since the clock, before any)
    retries: int | None = None  # retry events in the provider's current run of retries
    retrying_for: float | None = None  # seconds since the first of them

    def to_dict(self) -> dict[str, Any]:
        return {
            "workerId": self.worker_id,
            "attempt": self.attempt,
            "status": self.status,
            "healthy": self.healthy,
            "done": self.done,
            "reason": self.reason,
            "evidence": {
                "startedAt": self.started_at,
                "clock": self.clock,
                "secondsSinceClock": self.seconds_since_clock,
                "livenessArtifact": self.liveness_artifact,
                "heartbeatAge": self.heartbeat_age,
                "pid": self.pid,
                "pidAlive": self.pid_alive,
                "exitCode": self.exit_code,
                "resultPath": self.result_path,
                "resultSize": self.result_size,
                "resultMtime": self.result_mtime,
                "recordReason": self.record_reason,
                "lastActivityAt": self.last_activity_at,
                "lastEvent": self.last_event,
                "providerIdle": self.provider_idle,
                "retries": self.retries,
                "retryingFor": self.retrying_for,
            },
        }


def _stat(path: Path | None) -> os.stat_result | None:
    if path is None:
        return None
    try:
        return os.stat(path)
    except OSError:
        return None


def _inside(layout: RunLayout, value: str | None) -> Path | None:
    if not value:
        return None
    return _resolved(layout.project_root, value)


@functools.lru_cache(maxsize=1024)
def _resolved(root: Path, value: str) -> Path | None:
    """Resolve a recorded path once per process (wait re-assesses every second)."""
    try:
        return paths.resolve_inside(root, value, source="dispatch record")
    except InputError:
        return None


def _beat_of(path: Path | None) -> dict[str, Any]:
    """The heartbeat document worker-run writes ({} when absent or unreadable)."""
    if path is None:
        return {}
    try:
        doc = json.loads(path.read_bytes()[:65536])
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def assess(
    dispatch: Dispatch,
    layout: RunLayout,
    now: float,
    max_idle: float,
    launch_grace: float,
    idle_window: float = DEFAULT_IDLE_WINDOW,
    retry_window: float = DEFAULT_RETRY_WINDOW,
) -> Health:
    """Judge one dispatch at wall-clock time `now` (seconds since the epoch)."""
    ev = _evidence(dispatch, layout, now)
    healthy, reason, done = _judge(dispatch, ev, now, max_idle, launch_grace, idle_window, retry_window)
    d, rstat, clock = dispatch, ev.rstat, ev.clock
    return Health(
        healthy=healthy,
        done=done,
        reason=reason,
        worker_id=d.worker_id,
        attempt=d.attempt,
        status=d.status,
        started_at=d.started_at,
        clock=ev.clock_name if clock is not None else None,
        seconds_since_clock=_round(now - clock) if clock is not None else None,
        liveness_artifact=ev.artifact,
        heartbeat_age=_round(now - ev.fresh_mtime) if ev.fresh_mtime is not None else None,
        pid=d.pid,
        pid_alive=ev.alive,
        exit_code=d.exit_code,
        result_path=d.result_path,
        result_size=rstat.st_size if rstat else None,
        result_mtime=datetime.fromtimestamp(rstat.st_mtime).astimezone().isoformat(timespec="seconds") if rstat else None,
        record_reason=d.reason,
        last_activity_at=ev.last_at,
        last_event=ev.last_text,
        provider_idle=_round(ev.provider_idle),
        retries=ev.retries or None,
        retrying_for=_round(ev.retrying_for),
    )


@dataclass(frozen=True)
class _Evidence:
    """What the files and /proc say about one dispatch, read once."""

    rstat: os.stat_result | None  # the result file
    artifact: str | None  # the liveness artifact's run-relative path (the log when none)
    clock_name: str  # startedAt, or dispatchedAt before the worker started
    clock: float | None
    fresh_mtime: float | None  # the artifact's mtime when it is from this attempt
    alive: bool | None  # the recorded pid is this attempt's process (None: no pid)
    last: dict | None  # the provider's last event (heartbeat)
    last_at: str | None
    last_text: str | None
    provider_idle: float | None  # seconds since the provider's last event, when it streams
    streaming: bool
    retries: int  # the provider's current run of retries (heartbeat `retrying`): how many,
    retrying_for: float | None  # for how long (since its first),
    retry_text: str | None  # and what the last one said


def _evidence(d: Dispatch, layout: RunLayout, now: float) -> _Evidence:
    result = _inside(layout, d.result_path)
    artifact = d.liveness_artifact or d.log_path
    astat = _stat(_inside(layout, artifact))
    clock_name, clock_value = ("startedAt", d.started_at) if d.started_at else ("dispatchedAt", d.dispatched_at)
    clock = parse_iso(clock_value)
    fresh_mtime = astat.st_mtime if astat is not None and (clock is None or astat.st_mtime >= clock - CLOCK_SLACK) else None
    beat = _beat_of(_inside(layout, d.liveness_artifact)) if d.status == IN_PROGRESS and fresh_mtime is not None else {}
    last = beat.get("lastEvent") if isinstance(beat.get("lastEvent"), dict) else None
    last_at = beat.get("lastActivityAt") if isinstance(beat.get("lastActivityAt"), str) else d.last_activity_at
    active = parse_iso(last_at)
    retrying = beat.get("retrying") if isinstance(beat.get("retrying"), dict) else {}
    retrying_since = parse_iso(retrying.get("since")) if isinstance(retrying.get("since"), str) else None
    retries = retrying.get("count")
    return _Evidence(
        rstat=_stat(result) if result is not None else None,
        artifact=artifact,
        clock_name=clock_name,
        clock=clock,
        fresh_mtime=fresh_mtime,
        alive=processes.matches(d.pid, d.pid_start_time) if d.pid else None,
        last=last,
        last_at=last_at,
        last_text=f"{last.get('kind')}: {last.get('text')}" if last else d.last_event,
        provider_idle=now - max(active or clock, clock) if clock is not None and beat else None,
        streaming=bool(beat.get("streaming")),
        retries=retries if isinstance(retries, int) and retrying_since is not None else 0,
        retrying_for=max(0.0, now - retrying_since) if retrying_since is not None else None,
        retry_text=str(retrying.get("last")) if retrying_since is not None else None,
    )


def _judge(
    d: Dispatch, ev: _Evidence, now: float, max_idle: float, launch_grace: float, idle_window: float, retry_window: float
) -> tuple[bool, str, bool]:
    """(healthy, reason, done): the first rule below that applies."""
    if d.status == COMPLETED:
        if d.result_path is None:
            return False, "completed, but the record names no result path", False
        if ev.rstat is None or ev.rstat.st_size == 0:
            return False, f"completed without a result at {d.result_path}", False
        return True, "completed", True
    if d.terminal:
        why = f": {d.reason}" if d.reason else ""
        return False, f"ended {d.status}{why}", False
    if d.status not in (PENDING, IN_PROGRESS):
        return False, f"unknown status {d.status}", False
    if ev.alive is False:
        what = "reused by another process" if processes.exists(d.pid or 0) else "gone"
        return False, f"process {d.pid} {what} without a terminal status", False
    if ev.clock is None:
        if d.status == PENDING:
            return True, "pending, not dispatched yet", False
        return False, "in-progress without a startedAt", False
    since = now - ev.clock
    if ev.fresh_mtime is None:
        if since > launch_grace:
            why = f"({since:.0f} s since {ev.clock_name}, grace {launch_grace:g} s)"
            return False, f"no liveness artifact within the launch grace {why}", False
        return True, f"{d.status}, launching ({since:.1f} s since {ev.clock_name})", False
    idle = now - max(ev.fresh_mtime, ev.clock)
    if idle > max_idle:
        return False, f"liveness artifact idle for {idle:.0f} s (max idle {max_idle:g} s)", False
    if ev.retrying_for is not None and ev.retrying_for >= retry_window:
        runs = f"{ev.retries} retr{'y' if ev.retries == 1 else 'ies'} in {ev.retrying_for:.0f} s"
        return False, f"retrying: {ev.retry_text} ({runs}, nothing else since the first; retry window {retry_window:g} s)", False
    if ev.streaming and ev.provider_idle is not None and ev.provider_idle > idle_window:
        last = f"last: {ev.last_text}" if ev.last_text else "none since " + ev.clock_name
        return False, f"stalled: no provider event for {ev.provider_idle:.0f} s (idle window {idle_window:g} s; {last})", False
    return True, f"{d.status}, artifact {max(0.0, now - ev.fresh_mtime):.1f} s old", False


# -- selections -----------------------------------------------------------------


@dataclass(frozen=True)
class Selection:
    layout: RunLayout
    team_state_path: Path
    workers: tuple[str, ...]  # empty: the default selection

    def pick(self, state: team_state.TeamState) -> list[Dispatch]:
        """The named workers' newest attempts, else every worker's newest attempt: a worker
        that ended with an error must show (probe), not drop out of the default selection."""
        if self.workers:
            return [state.find(w) for w in self.workers]
        return list(state.latest())

    def load(self) -> list[Dispatch]:
        return self.pick(team_state.load(self.team_state_path))


def selection_of(run: Run, workers: Sequence[str]) -> Selection:
    """The chosen dispatches of `run`: `workers`, else the default selection."""
    selection = Selection(run.layout, run.team_state_path, tuple(workers))
    selection.load()  # unknown workers and bad state files are refused now, with exit 2
    return selection


def probe(
    selection: Selection,
    *,
    max_idle: float,
    launch_grace: float,
    idle_window: float = DEFAULT_IDLE_WINDOW,
    retry_window: float = DEFAULT_RETRY_WINDOW,
    now: Callable[[], float] = time.time,
) -> list[Health]:
    """Assess every selected dispatch; one that reads as dead is re-read once (it may have just finished)."""
    windows = (max_idle, launch_grace, idle_window, retry_window)
    found = [assess(d, selection.layout, now(), *windows) for d in selection.load()]
    if any(h.pid_alive is False and not h.healthy for h in found):
        # worker-run records the terminal status before it exits: a dead pid with a
        # non-terminal record read a moment ago may be a worker that just finished.
        found = [assess(d, selection.layout, now(), *windows) for d in selection.load()]
    return found


# -- waiting ------------------------------------------------------------------------

# What a wait ended with (worker-wait maps each to its exit code).
ALL_DONE = "all done"
UNHEALTHY = "a worker is unhealthy"
TIMED_OUT = "timed out"


@dataclass
class WaitOutcome:
    verdict: str  # ALL_DONE, UNHEALTHY or TIMED_OUT
    healths: list[Health] = field(default_factory=list)
    waited: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.verdict == ALL_DONE,
            "timedOut": self.verdict == TIMED_OUT,
            "waitedSeconds": round(self.waited, 3),
            "done": [h.worker_id for h in self.healths if h.done],
            "pending": [h.worker_id for h in self.healths if h.healthy and not h.done],
            "unhealthy": [h.worker_id for h in self.healths if not h.healthy],
            "workers": [h.to_dict() for h in self.healths],
        }


def check_waitable(selection: Selection) -> list[Dispatch]:
    """Refuse (exit 2) a dispatch with no recorded result path, or one outside the project."""
    chosen = selection.load()
    for d in chosen:
        if not d.result_path:
            raise RefusedError(
                f"dispatch {d.worker_id!r} attempt {d.attempt} has no recorded resultPath",
                hint="worker-wait never guesses a result file; re-dispatch it so the record names one",
            )
        paths.resolve_inside(
            selection.layout.project_root, d.result_path, source=f"{selection.team_state_path}: {d.worker_id} resultPath"
        )
    return chosen


def wait(
    selection: Selection,
    *,
    timeout: float,
    max_idle: float,
    launch_grace: float,
    idle_window: float = DEFAULT_IDLE_WINDOW,
    retry_window: float = DEFAULT_RETRY_WINDOW,
    progress: Callable[[list[Health], float], None] | None = None,
) -> WaitOutcome:
    """Block until every selected worker is done, one is unhealthy or `timeout` passes.

    A selected dispatch that was never launched (pending, no dispatchedAt) would keep it
    waiting for nothing: refused at once (exit 2, "run team-dispatch"), unless another
    worker is already unhealthy (that answer comes first)."""
    chosen = check_waitable(selection)
    never = [d for d in chosen if d.status == PENDING and not d.dispatched_at and not d.started_at]
    if never:
        healths = probe(
            selection, max_idle=max_idle, launch_grace=launch_grace, idle_window=idle_window, retry_window=retry_window
        )
        if any(not h.healthy for h in healths):
            return WaitOutcome(UNHEALTHY, healths, 0.0)
        names = ", ".join(d.worker_id if d.attempt == 1 else f"{d.worker_id} (attempt {d.attempt})" for d in never)
        raise RefusedError(
            f"nothing to wait for: {names} never dispatched (pending, not launched)",
            hint=f"run team-dispatch{' --round ' + never[0].round if never[0].round else ''} first, then worker-wait",
        )
    folders = [selection.team_state_path.parent, selection.layout.results_dir]
    folders += [
        paths.resolve_inside(selection.layout.project_root, d.result_path, source="resultPath").parent
        for d in chosen
        if d.result_path
    ]
    with inotify.FolderWatch(folders) as watch:
        tick = REASSESS_EVERY if watch.uses_inotify else inotify.FALLBACK_POLL
        started = time.monotonic()
        while True:
            healths = probe(
                selection, max_idle=max_idle, launch_grace=launch_grace, idle_window=idle_window, retry_window=retry_window
            )
            waited = time.monotonic() - started
            if progress is not None:
                progress(healths, waited)
            if any(not h.healthy for h in healths):
                return WaitOutcome(UNHEALTHY, healths, waited)
            if all(h.done for h in healths):
                return WaitOutcome(ALL_DONE, healths, waited)
            left = timeout - waited
            if left <= 0:
                return WaitOutcome(TIMED_OUT, healths, waited)
            # Wake when the first provider's idle or retry window runs out, not up to a tick later.
            stalls = [idle_window - h.provider_idle for h in healths if h.provider_idle is not None]
            stalls += [retry_window - h.retrying_for for h in healths if h.retrying_for is not None]
            due = min((x for x in stalls if x > 0), default=tick) + 0.01
            watch.wait(min(tick, left, due))
