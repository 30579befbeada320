"""Launch a round of pending dispatches (DESIGN §6): prompt check first, then the backend.

`dispatch()` picks the pending dispatches (the newest attempt of each worker,
optionally one round or some workers), checks every prompt against the
prompt contract and refuses the whole round when any prompt fails, launches
`worker-run` for each through the run's backend in one batch, records the
pane ids (and `dispatchedAt`, the launch grace's clock) under the team-state
lock, and returns at once. It never waits for a worker.

A re-dispatch of a worker whose newest attempt is terminal adds attempt N+1
with fresh prompt, result, log and heartbeat paths from the run layout (the
prompt is copied to the new prompt path); the old attempt's files are never
reused, so a stale result can never be read as the new one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from okstra.core import cli, fsio, gate
from okstra.core.clock import now_iso
from okstra.core.errors import OkstraError, ProblemsFound, RefusedError
from okstra.model import spend, team_state
from okstra.model.catalog import Catalog
from okstra.model.dispatch import ERROR, PENDING, Dispatch
from okstra.model.layout import Run, new_attempt
from okstra.model.team_state import TeamState
from okstra.team import processes
from okstra.team.backends import registry
from okstra.team.backends.base import Launched, LaunchSpec, PartialLaunch

WORKER_RUN = "worker-run"


@dataclass(frozen=True)
class Dispatched:
    worker_id: str
    attempt: int
    pane_id: str | None
    pid: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"workerId": self.worker_id, "attempt": self.attempt, "paneId": self.pane_id, "pid": self.pid}


@dataclass
class DispatchOutcome:
    run_id: str
    backend: str
    dispatched: list[Dispatched] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "backend": self.backend,
            "dispatched": [d.to_dict() for d in self.dispatched],
            "panes": sum(1 for d in self.dispatched if d.pane_id),
        }


def worker_argv(run: Run, worker_id: str, attempt: int) -> tuple[str, ...]:
    """What a pane or background process runs for one dispatch (the interpreter running us)."""
    door = cli.BIN_DIR / WORKER_RUN
    return (sys.executable, str(door), "--run-manifest", str(run.manifest_path), "--worker", worker_id, "--attempt", str(attempt))


def title_of(d: Dispatch) -> str:
    attempt = f" #{d.attempt}" if d.attempt > 1 else ""
    return f"okstra {d.worker_id}{attempt} {d.role} {d.provider}/{d.model_id}"


def select(state: TeamState, *, round_name: str | None, workers: Sequence[str]) -> list[Dispatch]:
    """The newest attempt of each chosen worker, when it is pending."""
    latest = state.latest()
    if workers:
        chosen = [state.find(w) for w in dict.fromkeys(workers)]
        not_pending = [f"{d.worker_id} (attempt {d.attempt} is {d.status})" for d in chosen if d.status != PENDING]
        if not_pending:
            raise RefusedError(
                f"nothing pending to dispatch for {', '.join(not_pending)}",
                hint="use --redispatch WORKER for a worker whose newest attempt is terminal",
            )
    else:
        chosen = [d for d in latest if d.status == PENDING]
    if round_name is not None:
        chosen = [d for d in chosen if d.round == round_name]
    return chosen


def next_attempt(run: Run, previous: Dispatch) -> Dispatch:
    """Attempt N+1 of a worker: same role and model, every path fresh from the run layout."""
    return new_attempt(
        run.layout,
        worker_id=previous.worker_id,
        role=previous.role,
        provider=previous.provider,
        model_id=previous.model_id,
        attempt=previous.attempt + 1,
        liveness_mode=previous.liveness_mode,
    ).evolve(round=previous.round)


class PromptContract(Protocol):
    """The prompt contract (DESIGN §4) bound to one run, and the catalog it judges by: the run
    domain's (`run.prompts.Contract`), passed in by team-dispatch."""

    catalog: Catalog

    def __call__(self, text: str, dispatch: Dispatch) -> list[str]: ...


def check_prompts(run: Run, contract: PromptContract, dispatches: Sequence[Dispatch]) -> dict[str, str]:
    """Every prompt's text, after the prompt contract; all problems of the round at once."""
    if not dispatches:
        return {}
    texts: dict[str, str] = {}
    problems: list[str] = []
    for d in dispatches:
        where = f"{d.worker_id} attempt {d.attempt}"
        if not d.prompt_path:
            problems.append(f"{where}: no recorded promptPath")
            continue
        path = run.resolve(d.prompt_path, f"{run.team_state_path}: {where} promptPath")
        text = fsio.read_text(path, what="prompt file")
        texts[d.worker_id] = text
        problems += [f"{where}: {run.layout.relative(path)}: {p}" for p in contract(text, d)]
    if problems:
        raise ProblemsFound(problems, summary=f"{len(problems)} prompt problem(s): the round was not dispatched")
    return texts


def dispatch(
    run: Run,
    contract: PromptContract,
    *,
    round_name: str | None = None,
    workers: Sequence[str] = (),
    redispatch: Sequence[str] = (),
    budget: spend.Budget | None = None,
    launch_gate: Path | None = None,
) -> DispatchOutcome:
    """Check, estimate, claim, launch, record: each step below, in this order (DESIGN §6).
    `launch_gate`: closed (core.gate) just before the launch, and until this process exits, so the
    workers begin once it has returned; only a command passes it, never a long-lived caller."""
    state = run.state()
    backend = registry.for_run(run, env={**os.environ, gate.ENV: str(launch_gate)} if launch_gate else None)
    _check_pane_ids(run, state, backend)
    fresh = _fresh_attempts(run, state, redispatch)
    pending = select(state, round_name=round_name, workers=workers) if (workers or not redispatch or round_name) else []
    pending = [d for d in pending if d.worker_id not in {p.worker_id for p, _ in fresh}]
    # The prompt contract, for the whole round (one catalog load), before anything is written or started.
    texts = check_prompts(run, contract, [*pending, *(p for p, _ in fresh)])
    estimates = _estimates(run, state, [*pending, *(n for _, n in fresh)], texts, budget, contract.catalog)  # before any write
    _add_attempts(run, fresh, texts)
    outcome = DispatchOutcome(run.manifest.run_id, backend.name)
    dispatched_at = now_iso()
    todo = _claim(run, pending + [n for _, n in fresh], dispatched_at)
    if not todo:
        return outcome
    from okstra.team import worktrees

    worktrees.prepare(run.layout, [(d.worker_id, d.role) for d in todo], _stage_base(run))
    if launch_gate is not None:
        gate.hold(launch_gate)
    launched = _launch(run, backend, todo, dispatched_at, estimates)
    outcome.dispatched = [Dispatched(x.spec.worker_id, x.spec.attempt, x.pane_id, x.pid) for x in launched]
    return outcome


def _check_pane_ids(run: Run, state: TeamState, backend) -> None:
    """A hand-edited pane id is refused before anything starts."""
    for d in state.dispatches:
        if d.pane_id is not None and backend.has_panes:
            backend.check_pane_id(d.pane_id, f"{run.team_state_path}: {d.worker_id} attempt {d.attempt} paneId")


def _fresh_attempts(run: Run, state: TeamState, redispatch: Sequence[str]) -> list[tuple[Dispatch, Dispatch]]:
    """(previous terminal attempt, new attempt) for each --redispatch worker."""
    fresh: list[tuple[Dispatch, Dispatch]] = []
    for worker_id in dict.fromkeys(redispatch):
        previous = state.find(worker_id)
        if not previous.terminal:
            raise RefusedError(
                f"--redispatch {worker_id}: attempt {previous.attempt} is still {previous.status}",
                hint="wait for it, or run team-teardown, before dispatching it again",
            )
        fresh.append((previous, next_attempt(run, previous)))
    return fresh


def _add_attempts(run: Run, fresh: list[tuple[Dispatch, Dispatch]], texts: dict[str, str]) -> None:
    """Copy each re-dispatched prompt to its new path and add the new attempts to the team state."""
    for previous, new in fresh:
        target = run.resolve(new.prompt_path or "", "new promptPath")
        fsio.atomic_write(target, texts[previous.worker_id])
    if not fresh:
        return

    def add(current: TeamState) -> TeamState:
        known = {d.key for d in current.dispatches}
        for _, new in fresh:
            if new.key in known:
                raise RefusedError(f"--redispatch {new.worker_id}: attempt {new.attempt} already exists")
        return TeamState(current.run_id, current.dispatches + tuple(n for _, n in fresh))

    team_state.update(run.team_state_path, add)


def _claim(run: Run, todo: Sequence[Dispatch], claimed_at: str) -> list[Dispatch]:
    """Under the team-state lock, take each dispatch that is still pending and unclaimed by
    stamping its dispatchedAt; return those this call took. Two team-dispatch calls at
    once therefore launch each worker exactly once (DESIGN §6)."""
    wanted = {d.key for d in todo}
    taken: list[Dispatch] = []

    def change(current: TeamState) -> TeamState:
        out = []
        for d in current.dispatches:
            if d.key in wanted and d.status == PENDING and d.dispatched_at is None:
                d = d.evolve(dispatched_at=claimed_at)
                taken.append(d)
            out.append(d)
        return TeamState(current.run_id, tuple(out))

    if wanted:
        team_state.update(run.team_state_path, change)
    return taken


def _launch(run: Run, backend, todo: Sequence[Dispatch], dispatched_at: str, estimates: dict) -> list[Launched]:
    """Launch the claimed dispatches in one batch and record what started; a dispatch that
    could not start is recorded `error` with the reason, never left claimed and pending."""
    specs = [
        LaunchSpec(
            worker_id=d.worker_id,
            attempt=d.attempt,
            argv=worker_argv(run, d.worker_id, d.attempt),
            title=title_of(d),
            log_path=run.resolve(d.log_path, "logPath") if d.log_path else run.layout.log_path(d.worker_id, d.attempt),
            cwd=run.root,
        )
        for d in todo
    ]
    try:
        launched = list(backend.launch(specs))
    except PartialLaunch as exc:
        _record(run, exc.launched, dispatched_at, estimates)
        _not_started(run, todo, exc.launched, str(exc))
        raise
    except (OSError, OkstraError) as exc:
        _not_started(run, todo, [], str(exc))
        raise
    _record(run, launched, dispatched_at, estimates)
    return launched


def _not_started(run: Run, todo: Sequence[Dispatch], launched: Sequence[Launched], why: str) -> None:
    started = {(x.spec.worker_id, x.spec.attempt) for x in launched}
    failed = {d.key for d in todo if d.key not in started}

    def change(current: TeamState) -> TeamState:
        out = []
        for d in current.dispatches:
            if d.key in failed and d.status == PENDING:
                d = d.evolve(status=ERROR, reason=f"could not start: {' '.join(why.split())}", finished_at=now_iso())
            out.append(d)
        return TeamState(current.run_id, tuple(out))

    if failed:
        team_state.update(run.team_state_path, change)


def _estimates(
    run: Run, state: TeamState, todo: Sequence[Dispatch], texts: dict[str, str], budget: spend.Budget | None, catalog: Catalog
) -> dict:
    """Each dispatch's spend estimate from its prompt; refused before anything starts when the
    run's budget would be passed (README "Scope and spend")."""
    found = {}
    for d in todo:
        if d.worker_id in texts:  # every checked prompt (check_prompts reads them all)
            provider = catalog.provider(d.provider)
            found[d.key] = spend.estimate(provider, provider.model(d.model_id), texts[d.worker_id])
    if budget is None or not found:
        return found
    going = {d.key for d in todo}
    committed = sum(line.committed for line in spend.lines((d for d in state.dispatches if d.key not in going), catalog))
    labels = [(f"{d.worker_id} attempt {d.attempt} ({d.provider}/{d.model_id})", found[d.key]) for d in todo if d.key in found]
    spend.check(budget, run.manifest.run_id, committed, labels)
    return found


def _stage_base(run: Run) -> str | None:
    """Where an isolated implementer's worktree starts: the approved stage's base commit."""
    return run.manifest.base_commit


def _record(run: Run, launched: Sequence[Launched], dispatched_at: str, estimates: dict | None = None) -> None:
    """Pane ids, dispatchedAt and (until worker-run writes its own) pid/pgid/start time, one locked update."""
    by_key = {(x.spec.worker_id, x.spec.attempt): x for x in launched}
    starts = {x.pid: processes.start_time(x.pid) for x in launched if x.pid}

    def change(current: TeamState) -> TeamState:
        out = []
        for d in current.dispatches:
            x = by_key.get(d.key)
            if x is not None:
                d = d.evolve(pane_id=x.pane_id, dispatched_at=dispatched_at, estimate=(estimates or {}).get(d.key, d.estimate))
                if d.pid is None and x.pid:  # the pane's process is worker-run itself (exec'd)
                    d = d.evolve(pid=x.pid, pgid=x.pid, pid_start_time=starts.get(x.pid))
            out.append(d)
        return TeamState(current.run_id, tuple(out))

    if launched:
        team_state.update(run.team_state_path, change)
