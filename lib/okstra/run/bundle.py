"""Prepare a run (DESIGN §3) in named steps; nothing is written until every rule passed.

- `prepare(root, request)` checks every rule — task key and type, the stage and
  its git reconcile, backend, lead pane, brief, catalog, role plan — and builds
  every document in memory (the run number is the next free one, not claimed).
- `blocking_run(root)` is the concurrent-run gate: the active run, when it still
  has unfinished workers (a new run must not silently take its place).
- `write(prepared)` writes the run in a temporary folder under `.okstra/runs/`
  and the new task counter as a temporary beside it; only when every byte is
  down is the folder renamed into place, the active run written (with its
  seal), and the counter renamed over the old one. A refusal or a failure
  (disk full) leaves no half-written run and advances no counter; the staging
  folder of a render-bundle killed mid-write (SIGKILL) is swept by the next one
  of the same task, under the task's lock.

The report number is only peeked (`reports` is committed by whoever writes the
report, so a run that writes none leaves its number to the next run). Each
document is validated against its schema before anything is written.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from okstra.core import fsio, git, schemas
from okstra.core.clock import now_iso
from okstra.core.errors import InputError, ProblemsFound, RefusedError, StateError
from okstra.model import active_run, layout, spend, team_state
from okstra.model.active_run import ActiveRun, ApprovedStage, PlannedStage
from okstra.model.catalog import Catalog
from okstra.model.dispatch import Dispatch
from okstra.model.run_manifest import BACKENDS, TASK_TYPES, RunManifest
from okstra.model.team_state import TeamState
from okstra.run import catalog as catalog_loader
from okstra.run import config, prompts, roles

RUNS = "runs"
REPORTS = "reports"
PHASE = active_run.PREPARED
_PANE = re.compile(r"^[%@$]?[A-Za-z0-9][A-Za-z0-9:._-]{0,63}$")
MAX_BRIEF = 64 * 1024


@dataclass(frozen=True)
class BundleRequest:
    task_key: str
    task_type: str
    workers: Sequence[str] | None = None
    executor: str | None = None
    role_models: Sequence[str] = ()
    report_language: str | None = None
    backend: str | None = None
    stage: int | None = None
    plan: str | None = None
    planned: PlannedStage | None = None  # stage `stage` of `plan` and its text, as the report domain read them
    lead_pane: str | None = None
    brief: str | None = None
    budget: spend.Budget | None = None  # the run's spend budget (--budget-usd, else budget-usd in config)
    allow_dirty: bool = False


@dataclass(frozen=True)
class BundleResult:
    project_root: Path
    run_id: str
    run_number: int
    report_number: int
    run_dir: Path
    run_manifest_path: Path
    team_state_path: Path
    active_run_path: Path
    prompt_paths: Mapping[str, Path]
    manifest: RunManifest
    team_state: TeamState
    written: tuple[Path, ...] = field(default=())

    def relative(self, path: Path) -> str:
        return layout.paths.relative(self.project_root, path)

    def to_dict(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "runNumber": self.run_number,
            "reportNumber": self.report_number,
            "runDir": self.relative(self.run_dir),
            "runManifestPath": self.relative(self.run_manifest_path),
            "teamStatePath": self.relative(self.team_state_path),
            "activeRunPath": self.relative(self.active_run_path),
            "prompts": {w: self.relative(p) for w, p in self.prompt_paths.items()},
        }


def _backend(request: BundleRequest, project_root: Path) -> str:
    """--backend, else the config's `backend` (whose default is panes inside tmux, else processes)."""
    if request.backend is not None:
        if request.backend not in BACKENDS:
            raise InputError(f"--backend {request.backend!r} is not a backend", hint=f"use one of {', '.join(BACKENDS)}")
        return request.backend
    return config.effective("backend", project_root).value


def _lead_pane(request: BundleRequest, backend: str) -> str | None:
    pane, source = request.lead_pane, "--lead-pane"
    if pane is None and backend == "tmux-pane":
        pane, source = os.environ.get("TMUX_PANE") or None, "TMUX_PANE"
    if pane is not None and not _PANE.match(pane):
        raise InputError(f"{source}: {pane!r} is not a pane id", hint="pass a tmux pane id such as %3")
    if backend == "tmux-pane" and pane is None:
        raise RefusedError(
            "--backend tmux-pane needs the lead's pane: not inside tmux ($TMUX_PANE is not set) and no --lead-pane",
            hint="run the lead inside tmux, pass --lead-pane %N, or use --backend cli-wrapper",
        )
    return pane


def check_stage_request(request: BundleRequest) -> None:
    """`--stage N` and `--plan PLAN` go together, for an implementation run (DESIGN §7)."""
    if request.stage is None:
        if request.plan is not None:
            raise InputError("--plan goes with --stage N", hint="add --stage N, or drop --plan")
        return
    if isinstance(request.stage, bool) or not isinstance(request.stage, int) or request.stage < 1:
        raise InputError(f"--stage {request.stage!r} is not a stage number", hint="stages are numbered from 1")
    if request.task_type != "implementation":
        raise InputError(
            f"--stage renders an implementation stage, not {request.task_type}", hint="use --task-type implementation"
        )
    if request.plan is None:
        raise InputError("--stage needs --plan PLAN", hint="name the approved implementation plan report (its .md)")


def _stage(request: BundleRequest) -> PlannedStage | None:
    """The approved stage `--stage N` renders. The report domain reads it from the approved
    plan (`report.stage_queue.approved_stage`); render-bundle passes it in as `planned`."""
    check_stage_request(request)
    if request.stage is None:
        return None
    if request.planned is None or request.planned.approved.number != request.stage:
        raise InputError(
            f"--stage {request.stage}: no approved stage {request.stage} was given with the request",
            hint="resolve it from the plan first (report.stage_queue.approved_stage), as render-bundle does",
        )
    return request.planned


def _reconcile(root: Path, stage: ApprovedStage) -> list[str]:
    """What differs between the working tree and the stage's start: uncommitted changes to
    tracked files, or a HEAD that is not the stage's base commit (untracked files never block)."""
    try:
        changed = git.tracked_changes(root)
    except RefusedError as exc:
        return [exc.message]
    problems = []
    if changed:
        shown = ", ".join(changed[:8]) + (f" and {len(changed) - 8} more" if len(changed) > 8 else "")
        problems.append(f"uncommitted changes to tracked files: {shown}")
    head = git.head(root) or ""
    if stage.base_commit and not (head.startswith(stage.base_commit) or (head and stage.base_commit.startswith(head))):
        problems.append(f"HEAD is {head[:12] or 'unborn'}, not stage {stage.number}'s base commit {stage.base_commit}")
    return problems


def _brief(request: BundleRequest, stage: PlannedStage | None) -> str:
    """The task brief every prompt carries: --brief (required but for a stage render,
    whose brief is the stage's plan text, with --brief added as the lead's notes)."""
    given = request.brief
    if given is not None and (len(given) > MAX_BRIEF or "\x00" in given):
        raise InputError("--brief: longer than 64 KiB or not text", hint="shorten the brief")
    given = given.strip() if given is not None else None
    if given == "":
        raise InputError("--brief is empty", hint="write the user's request, constraints and acceptance criteria into it")
    if stage is not None:
        return stage.text + (f"\n\n### The lead's notes\n\n{given}" if given else "")
    if given is None:
        raise InputError(
            f"a {request.task_type} run needs the task: --brief TEXT or --brief-file PATH (- for stdin)",
            hint="write the user's request, constraints and acceptance criteria into it; the workers see nothing else",
        )
    return given


@dataclass(frozen=True)
class Blocking:
    """The active run that blocks a new one: it has unfinished workers."""

    run: ActiveRun
    unfinished: tuple[str, ...]  # "<worker> <status>"

    def problems(self) -> list[str]:
        r = self.run
        return [
            f"run {r.run_id} (task {r.task_key}, {r.task_type}) is still active with unfinished workers: "
            f"{', '.join(self.unfinished)}",
            f"end it first: team-teardown --run-manifest {r.run_manifest_path} (or run-end --run-manifest "
            f"{r.run_manifest_path} to abandon it), or pass --replace-active to end it and start this run",
        ]


def blocking_run(project_root: Path) -> Blocking | None:
    """The concurrent-run gate (DESIGN §3): the active run when it has a dispatch not yet terminal."""
    root = Path(project_root).resolve()
    current = active_run.load(root)
    if current is None:
        return None
    state_path = layout.for_project(root).run(current.run_id).team_state
    if not state_path.exists():
        return None  # its run folder is gone: nothing of it can still run
    unfinished = tuple(f"{d.worker_id} {d.status}" for d in team_state.load(state_path).latest() if not d.terminal)
    return Blocking(current, unfinished) if unfinished else None


def _free_run(project: layout.ProjectLayout, key: layout.TaskKey) -> tuple[int, str]:
    """The next run number not used yet (peeked, not claimed: see `write`)."""
    number = layout.peek(project, key, RUNS)
    for _ in range(1000):
        run_id = project.run_id(key, number)
        if not project.run(run_id).dir.exists():
            return number, run_id
        number += 1
    raise StateError(f"{project.task_json(key)}: no free run number", hint="check the task's runs folder")


@dataclass(frozen=True)
class Prepared:
    """Everything a run is, in memory: checked, not written."""

    root: Path
    key: layout.TaskKey
    run_number: int
    run_id: str
    report_number: int
    brief: str
    prompts: Mapping[str, str]  # worker id -> prompt text
    manifest: RunManifest
    team_state: TeamState
    active: ActiveRun
    budget: dict[str, Any] | None = None  # the run's spend budget document (spend.json), when it has one


def prepare(project_root: Path, request: BundleRequest, *, catalog: Catalog | None = None) -> Prepared:
    """Check every rule of `request` and build the run in memory; refuses before any write."""
    root = Path(project_root).resolve()
    key = layout.TaskKey.parse(request.task_key)
    if request.task_type not in TASK_TYPES:
        raise InputError(f"--task-type {request.task_type!r} is not a task type", hint=f"use one of {', '.join(TASK_TYPES)}")
    stage = _stage(request)
    brief = _brief(request, stage)
    backend = _backend(request, root)
    lead_pane = _lead_pane(request, backend)
    catalog = catalog or catalog_loader.load(root)
    plan = _roles(request, catalog, root)
    _check_start(root, request, stage)
    approved = stage.approved if stage else None
    project = layout.for_project(root)
    run_number, run_id = _free_run(project, key)
    run = project.run(run_id)
    dispatches = tuple(
        layout.new_attempt(run, worker_id=e.worker_id, role=e.role, provider=e.provider, model_id=e.model_id, attempt=1)
        for e in plan.first_round
    )
    active = _active(root, project, run, key, request.task_type, approved)
    manifest = _manifest(
        project, run, key, request.task_type, (run_number, layout.peek(project, key, REPORTS)), backend, lead_pane, approved, plan
    )
    texts = {d.worker_id: prompts.render(manifest, d, catalog, brief=brief, run_layout=run) for d in dispatches}
    estimates = _estimates(request, run_id, dispatches, texts, catalog)
    state = TeamState(run_id, tuple(d.evolve(estimate=estimates[d.worker_id]) for d in dispatches))
    for path, name, document in (
        (run.team_state, "team-state", team_state.document(state)),
        (run.manifest, "run-manifest", manifest.to_dict()),
        (project.active_run, "active-run", active.to_dict()),
    ):
        schemas.check_state(name, document, str(path))
    budget = spend.budget_document(request.budget) if request.budget else None
    return Prepared(root, key, run_number, run_id, manifest.report_number, brief, texts, manifest, state, active, budget)


def _roles(request: BundleRequest, catalog: Catalog, root: Path) -> roles.RolePlan:
    return roles.plan(
        roles.PlanRequest(
            task_type=request.task_type,
            workers=request.workers,
            executor=request.executor,
            role_models=tuple(request.role_models),
            report_language=request.report_language,
        ),
        catalog,
        root,
    )


def _check_start(root: Path, request: BundleRequest, stage: PlannedStage | None) -> None:
    """A stage starts from its base commit with a clean tree, unless --allow-dirty."""
    if stage is None or request.allow_dirty:
        return
    differs = _reconcile(root, stage.approved)
    if differs:
        raise ProblemsFound(
            [f"stage {stage.approved.number} cannot start here: {d}" for d in differs]
            + ["commit or stash the changes and check out the base commit, or pass --allow-dirty"],
        )


def _active(
    root: Path,
    project: layout.ProjectLayout,
    run: layout.RunLayout,
    key: layout.TaskKey,
    task_type: str,
    approved: ApprovedStage | None,
) -> ActiveRun:
    return ActiveRun(
        run_id=run.run_id,
        task_key=str(key),
        task_type=task_type,
        run_dir=run.relative(run.dir),
        run_manifest_path=run.relative(run.manifest),
        phase=PHASE,
        stage=approved,
        allowed_commands=config.allowed_commands(root, approved.number if approved else None),
    )


def _manifest(
    project: layout.ProjectLayout,
    run: layout.RunLayout,
    key: layout.TaskKey,
    task_type: str,
    numbers: tuple[int, int],
    backend: str,
    lead_pane: str | None,
    approved: ApprovedStage | None,
    plan: roles.RolePlan,
) -> RunManifest:
    rel = run.relative
    run_number, report_number = numbers
    return RunManifest(
        run_id=run.run_id,
        task_key=str(key),
        task_type=task_type,
        run_number=run_number,
        report_number=report_number,
        terminal_backend=backend,
        created_at=now_iso("seconds"),
        run_dir=rel(run.dir),
        team_state_path=rel(run.team_state),
        prompts_dir=rel(run.prompts_dir),
        results_dir=rel(run.results_dir),
        logs_dir=rel(run.logs_dir),
        reports_dir=rel(run.reports_dir),
        lead_pane_id=lead_pane,
        stage=approved.number if approved else None,
        base_commit=approved.base_commit if approved else None,
        report_language=plan.report_language,
        participants=plan.participants,
        role_executions=plan.role_executions,
        assignments=plan.assignments,
        active_run_context={
            "activeRunPath": rel(project.active_run),
            "phase": PHASE,
            "approvedStage": approved.to_dict() if approved else None,
        },
    )


def _estimates(
    request: BundleRequest, run_id: str, dispatches: Sequence[Dispatch], texts: Mapping[str, str], catalog: Catalog
) -> dict[str, Any]:
    """Each dispatch's spend estimate from its prompt, checked against the run's budget (README "Scope and spend")."""
    estimates = {}
    for d in dispatches:
        provider = catalog.provider(d.provider)
        estimates[d.worker_id] = spend.estimate(provider, provider.model(d.model_id), texts[d.worker_id])
    spend.check(request.budget, run_id, 0.0, [(f"{w} (render-bundle)", e) for w, e in estimates.items()])
    return estimates


def _staged(path: Path, text: str) -> Path:
    """`text` written and synced to a temporary beside `path` (renamed into place later)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    fsio.atomic_write(Path(tmp), text)
    return Path(tmp)


def write(prepared: Prepared) -> BundleResult:
    """Write the prepared run: all of it, or nothing (see the module docstring)."""
    p = prepared
    project = layout.for_project(p.root)
    run = project.run(p.run_id)
    task_json = project.task_json(p.key)
    runs_dir = run.dir.parent
    made = _Made(runs_dir=not runs_dir.exists(), task_dir=not task_json.parent.exists())
    try:
        with fsio.locked(task_json):
            if layout.peek(project, p.key, RUNS) > p.run_number or run.dir.exists():
                raise StateError(
                    f"run number {p.run_number} of {p.key} was taken while this run was prepared",
                    hint="run render-bundle again",
                )
            runs_dir.mkdir(parents=True, exist_ok=True)
            # Under the task's lock no render-bundle of this task is mid-write: a staging
            # folder of this run number is a killed one's (the counter never moved).
            for stale in runs_dir.glob(f".{glob.escape(p.run_id)}.*.tmp"):
                shutil.rmtree(stale, ignore_errors=True)
            made.folder = Path(tempfile.mkdtemp(dir=runs_dir, prefix=f".{p.run_id}.", suffix=".tmp"))
            os.chmod(made.folder, 0o755)  # mkdtemp's 0700 would be the run folder's mode after the rename
            _write_run(p, run, made.folder)
            task = fsio.read_json(task_json, what="task file") if task_json.exists() else {"schemaVersion": "1.0"}
            task.setdefault("sequences", {})[RUNS] = p.run_number
            made.counter = _staged(task_json, fsio.dumps(task))
            # Every byte of the run is down: the run into place, then the active run (with
            # its seal, DESIGN §10), and the counter last by a rename that needs no space.
            os.rename(made.folder, run.dir)
            made.folder, made.placed = None, True
            active_run.write_file(p.root, p.active.to_dict())
            os.replace(made.counter, task_json)
            made.counter = None
    except BaseException:
        _undo(p, run, task_json, made)
        raise
    return BundleResult(
        project_root=p.root,
        run_id=p.run_id,
        run_number=p.run_number,
        report_number=p.report_number,
        run_dir=run.dir,
        run_manifest_path=run.manifest,
        team_state_path=run.team_state,
        active_run_path=active_run.path_for(p.root),
        prompt_paths={w: run.prompt_path(w) for w in p.prompts},
        manifest=p.manifest,
        team_state=p.team_state,
        written=(*(run.prompt_path(w) for w in p.prompts), run.brief, run.team_state, run.manifest, project.active_run),
    )


@dataclass
class _Made:
    """What `write` has made so far, for `_undo` to take away on a failure."""

    runs_dir: bool
    task_dir: bool
    folder: Path | None = None  # the staging folder, until it is renamed into place
    counter: Path | None = None  # the staged task counter, until it replaces the old one
    placed: bool = False  # the run folder is in place


def _write_run(p: Prepared, run: layout.RunLayout, staging: Path) -> None:
    """Every file of the run, written into the staging folder that becomes the run folder."""

    def inside(path: Path) -> Path:
        return staging / path.relative_to(run.dir)

    for worker_id, text in p.prompts.items():
        fsio.atomic_write(inside(run.prompt_path(worker_id)), text)
    for sub in (run.results_dir, run.logs_dir, run.reports_dir):
        inside(sub).mkdir(parents=True, exist_ok=True)
    fsio.atomic_write(inside(run.brief), p.brief.rstrip("\n") + "\n")
    team_state.write(inside(run.team_state), p.team_state)
    fsio.write_json(inside(run.manifest), p.manifest.to_dict())
    if p.budget is not None:
        fsio.write_json(inside(run.spend), p.budget)


def _undo(p: Prepared, run: layout.RunLayout, task_json: Path, made: _Made) -> None:
    """Leave the project as `write` found it: no staging, no run folder, no pointer, no counter."""
    if made.counter is not None:
        with contextlib.suppress(OSError):
            made.counter.unlink()
    if made.folder is not None:
        shutil.rmtree(made.folder, ignore_errors=True)
    if made.placed:
        active_run.end(p.root, p.run_id)  # a pointer half-written to this run goes with it
        shutil.rmtree(run.dir, ignore_errors=True)
    _remove_if_empty(run.dir.parent, made.runs_dir)
    if made.task_dir:
        with contextlib.suppress(OSError):
            task_json.with_name(task_json.name + ".lock").unlink()
        _remove_if_empty(task_json.parent, True)


def _remove_if_empty(folder: Path, made: bool) -> None:
    """Take away a folder this call made when nothing is left in it (and its empty parents
    up to `.okstra/`), so a refused run leaves the project as it found it."""
    if not made:
        return
    current = folder
    while current.name != layout.OKSTRA_DIR and current != current.parent:
        try:
            current.rmdir()
        except OSError:
            return
        current = current.parent


def render(project_root: Path, request: BundleRequest, *, catalog: Catalog | None = None) -> BundleResult:
    """Prepare and write one run of `request.task_key` when no other run blocks it."""
    prepared = prepare(project_root, request, catalog=catalog)
    blocking = blocking_run(prepared.root)
    if blocking is not None:
        raise ProblemsFound(blocking.problems())
    return write(prepared)
