"""Round boundary and end of run (DESIGN §6): `reclaim` and `teardown`.

- `reclaim` closes only the panes of dispatches whose status is terminal; an
  in-progress or pending worker keeps its pane, whenever it is called.
- `teardown` writes off every non-terminal dispatch as `error` with
  `TORN_DOWN_REASON` (first, so a worker's own signal handler finds the record
  terminal and leaves it), closes every recorded worker pane in one backend
  call, then stops what still runs: TERM to each recorded process group, KILL
  after a grace, and checks they are gone. A process is only signalled while
  its pid still carries the recorded start time, so a reused pid is never hit;
  its descendants (the provider CLI in its own group) are collected first and
  stopped the same way.

Both close only ids okstra recorded, after every stored id was checked (a bad
one is refused before anything is touched), give the lead pane its width
back, and with `dry_run` close and write nothing and say what they would close.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from okstra.core.clock import now_iso
from okstra.model import team_state
from okstra.model.dispatch import ERROR, TORN_DOWN_REASON, Dispatch
from okstra.model.team_state import TeamState
from okstra.team import liveness
from okstra.team.backends.base import WORKER, Backend
from okstra.team.context import Run

DEFAULT_GRACE = 5.0  # seconds between TERM and KILL (worker-run itself allows its child 2 s)
POLL = 0.02


@dataclass
class Outcome:
    action: str
    run_id: str
    backend: str
    dry_run: bool
    closed: list[tuple[str, str, str]] = field(default_factory=list)  # (paneId, kind, workerId)
    gone: list[str] = field(default_factory=list)
    kept: list[tuple[str, str]] = field(default_factory=list)  # (paneId, workerId) left open on purpose
    written_off: list[str] = field(default_factory=list)
    stopped: list[int] = field(default_factory=list)
    survivors: list[int] = field(default_factory=list)
    lead_restored: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "runId": self.run_id,
            "backend": self.backend,
            "dryRun": self.dry_run,
            "panes": len(self.closed),
            "closed": [{"paneId": p, "kind": k, "workerId": w} for p, k, w in self.closed],
            "alreadyGone": self.gone,
            "kept": [{"paneId": p, "workerId": w} for p, w in self.kept],
            "writtenOff": self.written_off,
            "stoppedPids": self.stopped,
            "survivingPids": self.survivors,
            "leadWidthRestored": self.lead_restored,
        }


def _check_ids(run: Run, backend: Backend, dispatches: Iterable[Dispatch]) -> None:
    for d in dispatches:
        if d.pane_id is not None:
            backend.check_pane_id(d.pane_id, f"{run.team_state_path}: {d.worker_id} attempt {d.attempt} paneId")


def _close(backend: Backend, outcome: Outcome, dispatches: list[Dispatch], dry_run: bool) -> None:
    owner = {d.pane_id: d.worker_id for d in dispatches if d.pane_id}
    if not owner:
        return
    result = backend.close(list(owner), dry_run=dry_run)
    outcome.closed = [(p, WORKER, owner[p]) for p in result.closed]
    outcome.gone = list(result.gone)
    outcome.lead_restored = result.lead_restored


def reclaim(run: Run, *, dry_run: bool = False) -> Outcome:
    state = run.state()
    backend = run.backend()
    _check_ids(run, backend, state.dispatches)
    outcome = Outcome("reclaim", run.manifest.run_id, backend.name, dry_run)
    outcome.kept = [(d.pane_id, d.worker_id) for d in state.dispatches if d.pane_id and not d.terminal]
    _close(backend, outcome, [d for d in state.dispatches if d.terminal], dry_run)
    return outcome


def teardown(run: Run, *, dry_run: bool = False, grace: float = DEFAULT_GRACE) -> Outcome:
    state = run.state()
    backend = run.backend()
    _check_ids(run, backend, state.dispatches)
    outcome = Outcome("teardown", run.manifest.run_id, backend.name, dry_run)
    if dry_run:
        _close(backend, outcome, list(state.dispatches), dry_run=True)
        outcome.written_off = [d.worker_id for d in state.dispatches if not d.terminal]
        return outcome

    # Every process still running that okstra recorded, with its descendants, before anyone dies.
    targets = _targets(state.dispatches)
    outcome.written_off = _write_off(run)
    _close(backend, outcome, list(state.dispatches), dry_run=False)
    outcome.stopped, outcome.survivors = _stop(targets, grace)
    return outcome


def _write_off(run: Run) -> list[str]:
    finished = now_iso()
    written: list[str] = []

    def change(current: TeamState) -> TeamState | None:
        out = []
        for d in current.dispatches:
            if not d.terminal:
                written.append(d.worker_id if d.attempt == 1 else f"{d.worker_id}#{d.attempt}")
                d = d.evolve(status=ERROR, reason=TORN_DOWN_REASON, finished_at=finished)
            out.append(d)
        return TeamState(current.run_id, tuple(out)) if written else None

    team_state.update(run.team_state_path, change)
    return written


# -- processes ------------------------------------------------------------------------


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                raw = handle.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = raw[raw.rfind(")") + 2 :].split()
        if len(fields) > 1 and fields[1].isdigit():
            tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def _targets(dispatches: Iterable[Dispatch]) -> dict[int, str | None]:
    """pid -> start time of every live recorded worker process (worker-run and its provider
    child, which an orphaning SIGKILL of worker-run leaves outside its tree) and all descendants."""
    recorded = [(d.pid, d.pid_start_time) for d in dispatches] + [(d.child_pid, d.child_start_time) for d in dispatches]
    roots = {pid: start for pid, start in recorded if pid and liveness.process_matches(pid, start)}
    if not roots:
        return {}
    tree = _children()
    found: dict[int, str | None] = {}
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid in found or pid <= 1 or pid == os.getpid():
            continue
        found[pid] = roots.get(pid) or liveness.process_start_time(pid)
        todo.extend(tree.get(pid, []))
    return found


def _signal(targets: dict[int, str | None], sig: int) -> None:
    groups = set()
    for pid, start in targets.items():
        if not liveness.process_matches(pid, start):
            continue
        try:
            pgid = os.getpgid(pid)
        except OSError:
            continue
        if pgid == pid:  # a group leader we recorded: its whole group
            if pgid not in groups:
                groups.add(pgid)
                _kill(os.killpg, pgid, sig)
        else:
            _kill(os.kill, pid, sig)


def _kill(send, target: int, sig: int) -> None:
    try:
        send(target, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _alive(targets: dict[int, str | None]) -> list[int]:
    return [pid for pid, start in targets.items() if liveness.process_matches(pid, start)]


def _stop(targets: dict[int, str | None], grace: float) -> tuple[list[int], list[int]]:
    """TERM, wait up to `grace`, KILL, verify. Returns (signalled pids, survivors)."""
    if not targets:
        return [], []
    signalled = _alive(targets)
    _signal(targets, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while _alive(targets) and time.monotonic() < deadline:
        time.sleep(POLL)
    if _alive(targets):
        _signal(targets, signal.SIGKILL)
        deadline = time.monotonic() + 2.0
        while _alive(targets) and time.monotonic() < deadline:
            time.sleep(POLL)
    return signalled, _alive(targets)
