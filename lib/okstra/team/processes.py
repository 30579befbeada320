"""Processes okstra recorded: is it still that process, and stopping it (DESIGN §5, §6).

A pid alone is not a process: pids are reused. Every record carries the
process start time (`/proc/<pid>/stat` field 22, clock ticks since boot), and
a pid is only judged alive, or signalled, while it still carries that time.
`stat_fields` is the one reader of `/proc/<pid>/stat`; `term_then_kill` is the
one "TERM, wait a grace, KILL" that worker-run (its provider child) and
teardown (every recorded worker) share.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Mapping
from pathlib import Path

POLL = 0.02  # seconds between checks while waiting for a process to go
KILL_WAIT = 2.0  # seconds to wait for the kernel to reap after SIGKILL


def stat_fields(pid: int) -> list[str] | None:
    """`/proc/<pid>/stat` from field 3 (state) on, or None when there is no such process.

    Field 2 (comm) may hold spaces and parentheses: the split starts after the last ')'.
    So the state is `[0]`, the parent pid `[1]`, the start time `[19]`.
    """
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as handle:
            raw = handle.read().decode("ascii", "replace")
    except (OSError, ValueError):
        return None
    return raw[raw.rfind(")") + 2 :].split()


def start_time(pid: int) -> str | None:
    """The process start time (clock ticks since boot, field 22), or None."""
    fields = stat_fields(pid)
    return fields[19] if fields and len(fields) > 19 else None


def matches(pid: int, recorded_start: str | None) -> bool:
    """True while `pid` runs (not a zombie) and, when `recorded_start` is known, is the same process."""
    fields = stat_fields(pid)
    if fields is None:
        if not Path("/proc/self/stat").exists():  # no procfs: ask the kernel directly
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return False
            except PermissionError:
                return True
            return True
        return False
    if fields[0] in ("Z", "X"):
        return False
    return recorded_start is None or (len(fields) > 19 and fields[19] == str(recorded_start))


def exists(pid: int) -> bool:
    """Some live process (perhaps another one, reusing the pid) has this pid; a zombie is gone."""
    fields = stat_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def children() -> dict[int, list[int]]:
    """Parent pid -> its children's pids, from one pass over /proc."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        fields = stat_fields(int(entry))
        if fields is not None and len(fields) > 1 and fields[1].isdigit():
            tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def with_descendants(roots: Mapping[int, str | None]) -> dict[int, str | None]:
    """pid -> start time of every live root and all its descendants (never pid 1 or ourselves)."""
    live = {pid: start for pid, start in roots.items() if pid and matches(pid, start)}
    if not live:
        return {}
    tree = children()
    found: dict[int, str | None] = {}
    todo = list(live)
    while todo:
        pid = todo.pop()
        if pid in found or pid <= 1 or pid == os.getpid():
            continue
        found[pid] = live.get(pid) or start_time(pid)
        todo.extend(tree.get(pid, []))
    return found


def alive(targets: Mapping[int, str | None]) -> list[int]:
    return [pid for pid, start in targets.items() if matches(pid, start)]


def _send(send: Callable[[int, int], None], target: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        send(target, sig)


def kill_group(pgid: int, sig: int) -> None:
    """Signal a whole process group; a group already gone is not an error."""
    _send(os.killpg, pgid, sig)


def signal_targets(targets: Mapping[int, str | None], sig: int) -> None:
    """Signal each target still carrying its start time; a group leader gets its whole group."""
    groups: set[int] = set()
    for pid, start in targets.items():
        if not matches(pid, start):
            continue
        try:
            pgid = os.getpgid(pid)
        except OSError:
            continue
        if pgid == pid:
            if pgid not in groups:
                groups.add(pgid)
                _send(os.killpg, pgid, sig)
        else:
            _send(os.kill, pid, sig)


def _wait_until_gone(is_alive: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while is_alive():
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL)
    return True


def term_then_kill(
    send: Callable[[int], None],
    is_alive: Callable[[], bool],
    *,
    grace: float,
    first: int = signal.SIGTERM,
    kill_wait: float = KILL_WAIT,
) -> bool:
    """Send `first` (SIGTERM unless a caller forwards another), wait up to `grace` for
    `is_alive()` to turn false, then SIGKILL and wait up to `kill_wait`. True when gone."""
    send(first)
    if _wait_until_gone(is_alive, grace):
        return True
    send(signal.SIGKILL)
    return _wait_until_gone(is_alive, kill_wait)


def stop(targets: Mapping[int, str | None], grace: float) -> tuple[list[int], list[int]]:
    """TERM → grace → KILL every target; returns (pids signalled, survivors)."""
    if not targets:
        return [], []
    signalled = alive(targets)
    term_then_kill(lambda sig: signal_targets(targets, sig), lambda: bool(alive(targets)), grace=grace)
    return signalled, alive(targets)


# -- a worker's own descendants (DESIGN §6) -------------------------------------------

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux prctl): an orphaned descendant (a
    provider's `setsid` helper whose parent exited) is re-parented to us instead of to
    init, so it stays ours to stop. False where prctl is unavailable."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def own_descendants() -> list[int]:
    """Every live (not zombie) descendant of this process."""
    tree = children()
    found: list[int] = []
    todo = list(tree.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        fields = stat_fields(pid)
        if fields is not None and fields[0] != "Z":
            found.append(pid)
        todo.extend(tree.get(pid, []))
    return found


def _reap() -> None:
    """Collect exited children (zombies re-parented to us) without blocking."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def stop_own_descendants(grace: float) -> list[int]:
    """TERM every descendant, wait up to `grace`, KILL what is left, reap; the pids signalled."""
    first = own_descendants()
    if not first:
        _reap()
        return []

    def send(sig: int) -> None:
        for pid in own_descendants():
            _send(os.kill, pid, sig)

    def left() -> bool:
        _reap()
        return bool(own_descendants())

    term_then_kill(send, left, grace=grace)
    _reap()
    return first
