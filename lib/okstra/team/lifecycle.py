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
What they closed is reported even when a later step (the width restore)
failed: that failure is a warning of the outcome, not a lost count.

The end of a run (DESIGN §3): `teardown` (and `abandon`, behind `run-end`)
records the run `ended` in its manifest and removes `.okstra/active-run.json`
when it names this run, so its write rules end with it; `abandon` also
records `finalStatus: abandoned`. `reclaim` records the round boundary (or the
user gate) as the active run's phase.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from okstra.core import fsio
from okstra.core.clock import now_iso
from okstra.model import active_run, team_state
from okstra.model.dispatch import ERROR, TORN_DOWN_REASON, Dispatch
from okstra.model.layout import Run
from okstra.model.team_state import TeamState
from okstra.team import processes
from okstra.team.backends import registry
from okstra.team.backends.base import WORKER, Backend

DEFAULT_GRACE = 5.0  # seconds between TERM and KILL (worker-run itself allows its child 2 s)
ABANDONED = "abandoned"


@dataclass
class CleanupOutcome:
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
    warnings: list[str] = field(default_factory=list)
    run_ended: bool = False  # this call removed the run's active-run file
    final_status: str | None = None

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
            "warnings": self.warnings,
            "runEnded": self.run_ended,
            "finalStatus": self.final_status,
        }


def _check_ids(run: Run, backend: Backend, dispatches: Iterable[Dispatch]) -> None:
    for d in dispatches:
        if d.pane_id is not None:
            backend.check_pane_id(d.pane_id, f"{run.team_state_path}: {d.worker_id} attempt {d.attempt} paneId")


def _close(backend: Backend, outcome: CleanupOutcome, dispatches: list[Dispatch], dry_run: bool) -> None:
    owner = {d.pane_id: d.worker_id for d in dispatches if d.pane_id}
    if not owner:
        return
    result = backend.close(list(owner), dry_run=dry_run)
    outcome.closed = [(p, WORKER, owner[p]) for p in result.closed]
    outcome.gone = list(result.gone)
    outcome.lead_restored = result.lead_restored
    outcome.warnings.extend(result.warnings)


def reclaim(run: Run, *, dry_run: bool = False, gate: bool = False) -> CleanupOutcome:
    state = run.state()
    backend = registry.for_run(run)
    _check_ids(run, backend, state.dispatches)
    outcome = CleanupOutcome("reclaim", run.manifest.run_id, backend.name, dry_run)
    outcome.kept = [(d.pane_id, d.worker_id) for d in state.dispatches if d.pane_id and not d.terminal]
    _close(backend, outcome, [d for d in state.dispatches if d.terminal], dry_run)
    if not dry_run:
        active_run.set_phase(run.root, run.manifest.run_id, active_run.USER_GATE if gate else active_run.ROUND_BOUNDARY)
    return outcome


def teardown(run: Run, *, dry_run: bool = False, grace: float = DEFAULT_GRACE, final_status: str | None = None) -> CleanupOutcome:
    """Close and stop everything of the run, then end it (with `final_status` when given)."""
    state = run.state()
    backend = registry.for_run(run)
    _check_ids(run, backend, state.dispatches)
    outcome = CleanupOutcome("teardown", run.manifest.run_id, backend.name, dry_run)
    if dry_run:
        _close(backend, outcome, list(state.dispatches), dry_run=True)
        outcome.written_off = [d.worker_id for d in state.dispatches if not d.terminal]
        return outcome

    # Every process still running that okstra recorded, with its descendants, before anyone dies.
    targets = _targets(state.dispatches)
    outcome.written_off = _write_off(run)
    _close(backend, outcome, list(state.dispatches), dry_run=False)
    outcome.stopped, outcome.survivors = processes.stop(targets, grace)
    outcome.final_status, outcome.run_ended = end(run, final_status=final_status)
    return outcome


def abandon(run: Run, *, dry_run: bool = False, grace: float = DEFAULT_GRACE) -> CleanupOutcome:
    """`run-end`: tear down what is left and record the run `abandoned`."""
    outcome = teardown(run, dry_run=dry_run, grace=grace, final_status=ABANDONED)
    outcome.action = "run-end"
    return outcome


def end(run: Run, *, final_status: str | None = None) -> tuple[str | None, bool]:
    """Record the run ended in its manifest (and `final_status`, when given), then end its
    write rules. Returns (the manifest's final status, whether the active-run file was removed)."""
    ended_at = now_iso("seconds")
    status: list[str | None] = []

    def mutate(raw: dict[str, Any]) -> bool:
        context = raw.get("activeRunContext")
        context = dict(context) if isinstance(context, dict) else {}
        changed = context.get("phase") != active_run.ENDED
        if changed:
            context.update(phase=active_run.ENDED, endedAt=ended_at)
            raw["activeRunContext"] = context
        if final_status is not None and raw.get("finalStatus") != final_status:
            raw["finalStatus"] = final_status
            changed = True
        status.append(raw.get("finalStatus"))
        return changed

    fsio.update_json(run.manifest_path, mutate)
    return status[0], active_run.end(run.root, run.manifest.run_id)


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


def _targets(dispatches: Iterable[Dispatch]) -> dict[int, str | None]:
    """pid -> start time of every live recorded worker process (worker-run and its provider
    child, which an orphaning SIGKILL of worker-run leaves outside its tree) and all descendants."""
    recorded = [(d.pid, d.pid_start_time) for d in dispatches] + [(d.child_pid, d.child_start_time) for d in dispatches]
    return processes.with_descendants({pid: start for pid, start in recorded if pid})
