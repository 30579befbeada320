"""The compact reminder: what the lead must know again after its context was compacted.

Claude Code runs `hooks/compact-reminder` on `SessionStart` with source `compact`;
whatever it prints on stdout (exit 0) is added to the lead's context. With an
active run it prints the run (task, type, stage, phase), a short team table from
the team state and the next okstra command to run; in a project that uses okstra
(a `.okstra/` folder) with no active run it says "no active run", so a lead whose
run ended does not continue it; elsewhere nothing. It never blocks the session: any problem becomes one line of the
reminder instead of an error (SessionStart cannot block anyway).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from okstra.core import jsonlite
from okstra.core.errors import OkstraError
from okstra.core.names import OKSTRA_DIR
from okstra.model import active_run, run_manifest, team_state
from okstra.model.dispatch import COMPLETED, IN_PROGRESS, PENDING, Dispatch
from okstra.model.layout import RunLayout

MAX_ROWS = 12
# After a run ended (team-teardown, stage-record, run-end) in a project that uses okstra.
# The same line is printed by the sh door (hooks/compact-reminder) before Python starts.
NO_ACTIVE_RUN = "okstra: no active run (the last run ended); start the next with render-bundle when the user asks."


def main(stdin=None, stdout=None, env=None) -> int:
    stdin = sys.stdin.buffer if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    env = os.environ if env is None else env
    try:
        data = _input(stdin.read())
        if data.get("source") not in (None, "compact"):
            return 0  # the matcher says compact; a hand-run with another source gets nothing
        root = _project_root(env, data)
        text = reminder(root) if root is not None else None
    except Exception as exc:  # noqa: BLE001 - a reminder must never break the session
        text = f"okstra: an okstra run may be active, but the reminder failed ({type(exc).__name__}: {exc}); run `team-status`."
    if text:
        stdout.write(text.rstrip("\n") + "\n")
        stdout.flush()
    return 0


def _input(raw: bytes) -> dict:
    try:
        data = jsonlite.loads(raw.decode("utf-8")) if raw.strip() else {}
    except (UnicodeDecodeError, jsonlite.JSONError):
        return {}
    return data if isinstance(data, dict) else {}


def _project_root(env, data: dict) -> Path | None:
    for name in ("CLAUDE_PROJECT_DIR", "OKSTRA_PROJECT_ROOT"):
        if env.get(name):
            return Path(env[name]).resolve()
    here = Path(data["cwd"] if isinstance(data.get("cwd"), str) and data.get("cwd") else os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if active_run.path_for(folder).exists():
            return folder
    return None


def reminder(root: Path) -> str | None:
    """The reminder text for the project at `root`: the active run, "no active run" in a
    project that uses okstra, else None."""
    try:
        run = active_run.load(root)
    except OkstraError as exc:
        return f"okstra: {active_run.ACTIVE_RUN_FILE} exists but cannot be read ({exc}); fix it or re-run render-bundle."
    if run is None:
        return NO_ACTIVE_RUN if (Path(root) / OKSTRA_DIR).is_dir() else None
    layout = RunLayout(Path(root), run.run_id)
    lines = [
        "okstra: your context was compacted while an okstra run is active. Continue it with the okstra-run skill.",
        f"Run:      {run.run_id} (task {run.task_key}, type {run.task_type}, phase {run.phase or '?'})",
        f"Manifest: {run.run_manifest_path}",
    ]
    if run.stage is not None:
        title = f" — {run.stage.title}" if run.stage.title else ""
        lines.append(
            f"Stage:    {run.stage.number}{title}: {len(run.stage.planned_paths)} planned path(s); "
            "the write-guard allows only those and okstra's files under .okstra/"
        )
    else:
        lines.append("Stage:    none approved (not an implementation stage)")

    manifest = None
    manifest_path = Path(root) / run.run_manifest_path
    try:
        manifest = run_manifest.load(manifest_path)
    except OkstraError as exc:
        lines.append(f"Manifest unreadable: {exc}")
    state = None
    try:
        state = team_state.load(layout.team_state)
    except OkstraError as exc:
        lines.append(f"Team state unreadable: {exc}")
    if state is not None:
        lines += ["Team:", *_team_table(state.latest())]
    lines.append(f"Next:     {next_step(run, manifest, state, layout)}")
    lines.append("Details:  team-status (the team table), okstra help (every command)")
    return "\n".join(lines)


def _team_table(dispatches: tuple[Dispatch, ...]) -> list[str]:
    if not dispatches:
        return ["  (no workers)"]
    rows = [("worker", "role", "provider/model", "status", "try")]
    for d in dispatches[:MAX_ROWS]:
        status = d.status + (f" ({d.reason})" if d.reason and d.status not in (COMPLETED, PENDING, IN_PROGRESS) else "")
        rows.append((d.worker_id, d.role, f"{d.provider}/{d.model_id}", status[:60], str(d.attempt)))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    out = ["  " + "  ".join(cell.ljust(widths[i]) if i < 4 else cell for i, cell in enumerate(r)).rstrip() for r in rows]
    if len(dispatches) > MAX_ROWS:
        out.append(f"  ... and {len(dispatches) - MAX_ROWS} more (team-status)")
    return out


def next_step(run, manifest, state, layout: RunLayout) -> str:
    """The next okstra command for the lead, from what is on disk."""
    m = f" --run-manifest {run.run_manifest_path}"
    if state is None:
        return f"team-status{m} (the team state is missing or unreadable; re-run render-bundle if it is gone)"
    latest = state.latest()
    running = [d.worker_id for d in latest if d.status == IN_PROGRESS]
    pending = [d.worker_id for d in latest if d.status == PENDING]
    if running:
        return f"worker-wait{m} (in progress: {', '.join(running)}); if it exits 1, worker-probe{m} and re-dispatch"
    if pending:
        return f"team-dispatch{m} (pending: {', '.join(pending)})"
    failed = [f"{d.worker_id} {d.status}" for d in latest if d.status != COMPLETED]
    retry = f"; ended without a result: {', '.join(failed)} (team-dispatch{m} --redispatch ID to retry)" if failed else ""
    if manifest is None:
        return f"team-reclaim{m} (all workers are terminal){retry}"
    data = layout.report_data(manifest.task_type, manifest.report_number)
    report = layout.report_markdown(manifest.task_type, manifest.report_number)
    sidecar = layout.sidecar(manifest.task_type, manifest.report_number)
    if not report.exists() or manifest.final_status is None:
        if data.exists():
            return (
                f"team-reclaim{m} (round boundary: PROGRESS: phase-batch-cleanup panes=<n>), then "
                f"report-finalize{m} (renders {layout.relative(data)} and its HTML view){retry}"
            )
        return (
            f"team-reclaim{m} (all workers are terminal: PROGRESS: phase-batch-cleanup panes=<n>), then the report: "
            f"round-prepare --role report-writer{m} and team-dispatch --round report (unless the report writer ran), "
            f"report-draft{m} (writes {layout.relative(data)}), render-final-report on it, then report-finalize{m}{retry}"
        )
    if not sidecar.exists():
        return (
            f"team-reclaim{m} (before the user gate: PROGRESS: phase-gate-cleanup panes=<n>), then "
            f"user-response-show --report {layout.relative(report)} and wait for the user's answers "
            "(HTML view Export or user-response-write in their terminal)"
        )
    return (
        f"user-response-show --report {layout.relative(report)} (the user has answered: act on it); "
        f"for a staged plan: stage-map PLAN --task-key {run.task_key} --next, and team-teardown{m} when this run is done"
    )
