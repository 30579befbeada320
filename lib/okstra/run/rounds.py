"""Later rounds of a run: the report writer, re-verification, critique, translation.

render-bundle dispatches each worker's first-round role; the manifest's role
executions name who plays the later ones (a worker pinned outside the roster,
e.g. a translator on another provider, gets its first dispatch here). Every
later prompt carries the run's task brief (`brief.md`) before what the round
works from. `prepare()` adds, for each worker
holding the role, a new pending attempt (fresh prompt, result, log and
heartbeat paths from the run layout, so no earlier file is ever read as the
new result) with a prompt for that role, under the team-state lock.
`team-dispatch --round <round>` then launches it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra.core import fsio
from okstra.core.errors import InputError, RefusedError
from okstra.model import layout, roles, team_state
from okstra.model.dispatch import COMPLETED, Dispatch
from okstra.model.run_manifest import RunManifest
from okstra.model.team_state import TeamState
from okstra.run import catalog as catalog_loader
from okstra.run import prompts


@dataclass(frozen=True)
class Round:
    run_id: str
    role: str
    round: str
    dispatches: tuple[Dispatch, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "role": self.role,
            "round": self.round,
            "dispatches": [
                {"workerId": d.worker_id, "attempt": d.attempt, "promptPath": d.prompt_path, "resultPath": d.result_path}
                for d in self.dispatches
            ],
        }


def _brief(role: str, state: TeamState, run: layout.RunLayout, manifest: RunManifest) -> str:
    """The run's task brief (render-bundle's --brief), then what this round works from."""
    inputs = _inputs(role, state, run, manifest)
    if not run.brief.exists():  # a run prepared before briefs were kept
        return inputs
    return fsio.read_text(run.brief, what="task brief").strip() + "\n\n" + inputs


def _inputs(role: str, state: TeamState, run: layout.RunLayout, manifest: RunManifest) -> str:
    if role == roles.TRANSLATOR:
        report = run.report_markdown(manifest.task_type, manifest.report_number)
        if not report.exists():
            raise RefusedError(
                f"run {state.run_id} has no rendered report to translate ({run.relative(report)})",
                hint="finish the report first (report-draft, render-final-report, report-finalize)",
            )
        return f"## Report to translate\n\n- `{run.relative(report)}` into `{manifest.report_language}`"
    done = [d for d in state.latest() if d.status == COMPLETED and d.result_path]
    if not done:
        raise RefusedError(
            f"run {state.run_id} has no completed result for a {role} round to work from",
            hint="wait for the first round with worker-wait",
        )
    lines = [f"- `{d.result_path}` ({d.worker_id}, {d.role}, {d.provider}/{d.model_id})" for d in done]
    return "## Results to work from\n\n" + "\n".join(lines)


def _result_path(role: str, run: layout.RunLayout, manifest: RunManifest, worker_id: str, attempt: int) -> Path:
    """The translator's result is the report's translation sidecar, where the HTML view looks."""
    if role == roles.TRANSLATOR and manifest.report_language:
        return run.report_translation(manifest.task_type, manifest.report_number, manifest.report_language)
    return run.result_path(worker_id, attempt)


def prepare(handle: layout.Run, role: str, workers: tuple[str, ...] = ()) -> Round:
    if role not in roles.LATER_ROLES:
        raise InputError(f"--role {role!r} is not a later-round role", hint=f"use one of {', '.join(roles.LATER_ROLES)}")
    manifest = handle.manifest
    holders = [e for e in manifest.role_executions if e.role == role and e.worker_id != roles.LEADER_ID]
    if workers:
        unknown = sorted(set(workers) - {e.worker_id for e in holders})
        if unknown:
            known = ", ".join(e.worker_id for e in holders) or "none"
            raise InputError(f"--worker {', '.join(unknown)} does not hold the {role} role in this run", hint=f"holders: {known}")
        holders = [e for e in holders if e.worker_id in workers]
    if not holders:
        raise RefusedError(f"no worker holds the {role} role in run {manifest.run_id}", hint="render the run with that role")
    run = handle.layout
    catalog = catalog_loader.load(handle.root)
    round_name = roles.round_of(role)
    added: list[Dispatch] = []

    def newest_attempt(state: TeamState, worker_id: str) -> int:
        """0 for a worker with no dispatch yet (a role pinned outside the roster: its own identity)."""
        return max((d.attempt for d in state.dispatches if d.worker_id == worker_id), default=0)

    def check(state: TeamState) -> str:
        for holder in holders:
            if not newest_attempt(state, holder.worker_id):
                continue
            newest = state.find(holder.worker_id)
            if not newest.terminal:
                raise RefusedError(
                    f"worker {holder.worker_id} is still {newest.status} (attempt {newest.attempt})",
                    hint="wait for it with worker-wait, or reclaim the round first",
                )
        return _brief(role, state, run, manifest)

    def change(state: TeamState) -> TeamState:
        brief = check(state)  # again under the lock: the state may have moved on
        new: list[Dispatch] = []
        for holder in holders:
            attempt = newest_attempt(state, holder.worker_id) + 1
            dispatch = layout.new_attempt(
                run,
                worker_id=holder.worker_id,
                role=role,
                provider=holder.provider,
                model_id=holder.model_id,
                attempt=attempt,
                result_path=_result_path(role, run, manifest, holder.worker_id, attempt),
            )
            text = prompts.render(manifest, dispatch, catalog, brief=brief, run_layout=run)
            fsio.atomic_write(run.prompt_path(holder.worker_id, attempt), text)
            new.append(dispatch)
        added.extend(new)
        return TeamState(state.run_id, state.dispatches + tuple(new))

    check(handle.state())  # refuse before touching anything, lock file included
    team_state.update(handle.team_state_path, change)
    return Round(manifest.run_id, role, round_name, tuple(added))
