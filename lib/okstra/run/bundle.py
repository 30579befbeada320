"""Prepare a run (DESIGN §3): `render(project_root, request) -> BundleResult`.

Order matters: every rule is checked (task key and type, backend, lead pane,
catalog, role plan) before anything is written. Then the run number is
claimed (`runs` sequence), the report number is only peeked (`reports` is
committed by whoever writes the report, so a run that writes none leaves its
number to the next run), the prompts are rendered in memory, and the files
are written: prompts, team state (one `pending` dispatch per roster worker,
attempt 1), run manifest, and finally `.okstra/active-run.json`. Each
document is validated against its schema before it is written.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from okstra.core import fsio, git, schemas
from okstra.core.clock import now_iso
from okstra.core.errors import InputError, RefusedError, StateError
from okstra.model import active_run, layout, spend
from okstra.model.active_run import ActiveRun, ApprovedStage
from okstra.model.catalog import Catalog
from okstra.model.run_manifest import BACKENDS, TASK_TYPES, RunManifest
from okstra.model.team_state import TeamState
from okstra.run import catalog as catalog_loader
from okstra.run import config, prompts, roles

RUNS = "runs"
REPORTS = "reports"
PHASE = "dispatch"
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
    lead_pane: str | None = None
    brief: str | None = None
    budget: spend.Budget | None = None  # the run's spend budget (--budget-usd, else budget-usd in config)


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
    if request.backend is not None:
        if request.backend not in BACKENDS:
            raise InputError(f"--backend {request.backend!r} is not a backend", hint=f"use one of {', '.join(BACKENDS)}")
        return request.backend
    value = config.effective("backend", project_root)
    return value.value if value else BACKENDS[0]


def _lead_pane(request: BundleRequest, backend: str) -> str | None:
    pane, source = request.lead_pane, "--lead-pane"
    if pane is None and backend == "tmux-pane":
        pane, source = os.environ.get("TMUX_PANE") or None, "TMUX_PANE"
    if pane is not None and not _PANE.match(pane):
        raise InputError(f"{source}: {pane!r} is not a pane id", hint="pass a tmux pane id such as %3")
    return pane


def _stage(request: BundleRequest, root: Path, key: layout.TaskKey) -> ApprovedStage | None:
    """The approved stage `--stage N` renders, from the approved plan `--plan` (DESIGN §7).

    The plan is an implementation-planning report of the same task whose sidecar
    holds an approved PLAN DECISION; its stage map names the stage's title and
    planned paths; the task's consumer log gives the base commit (the head of the
    dependency recorded done last).
    """
    if request.stage is None:
        if request.plan is not None:
            raise InputError("--plan goes with --stage N", hint="add --stage N, or drop --plan")
        return None
    if isinstance(request.stage, bool) or not isinstance(request.stage, int) or request.stage < 1:
        raise InputError(f"--stage {request.stage!r} is not a stage number", hint="stages are numbered from 1")
    if request.task_type != "implementation":
        raise InputError(
            f"--stage renders an implementation stage, not {request.task_type}", hint="use --task-type implementation"
        )
    if request.plan is None:
        raise InputError("--stage needs --plan PLAN", hint="name the approved implementation plan report (its .md)")
    from okstra.report import stage_map, stage_queue, user_response

    plan = user_response.load_report(root, request.plan)
    if plan.task_type != "implementation-planning" or plan.task_key != str(key):
        raise RefusedError(
            f"--plan {request.plan!r} is a {plan.task_type} report of {plan.task_key}",
            hint=f"name an implementation-planning report of {key}",
        )
    responses = user_response.read_sidecar(plan)
    decision = responses.plan_decision if responses is not None else None
    if decision is None or decision.status != "approved":
        state = "has no PLAN DECISION" if decision is None else f"says {decision.status}"
        raise RefusedError(
            f"the plan {request.plan!r} is not approved: its sidecar {plan.run.relative(plan.sidecar)} {state}",
            hint="the user approves it in the report's HTML view or with user-response-write --plan-decision",
        )
    stages = stage_map.load(plan.markdown, root=root)
    row = stages.row(request.stage)
    # A stage with no dependency starts from the project's HEAD: stage-check compares against it (DESIGN §10).
    base = stage_queue.base_commit_for(layout.for_project(root), key, stages, request.stage) or git.head(root)
    return ApprovedStage(row.stage, row.title, row.planned_paths, base)


def _brief(request: BundleRequest) -> str:
    if request.brief is None:
        return (
            f"The lead gives the details of task `{request.task_key}` in the conversation that "
            "dispatched you and in this task's earlier reports under `.okstra/runs/`; read them first."
        )
    if len(request.brief) > MAX_BRIEF or "\x00" in request.brief:
        raise InputError("brief: longer than 64 KiB or not text", hint="shorten the brief")
    return request.brief.strip()


def _claim_run(project: layout.ProjectLayout, key: layout.TaskKey) -> tuple[int, str]:
    for _ in range(1000):
        number = layout.claim(project, key, RUNS)
        run_id = project.run_id(key, number)
        if not project.run(run_id).dir.exists():
            return number, run_id
    raise StateError(f"{project.task_json(key)}: no free run number", hint="check the task's runs folder")


def render(project_root: Path, request: BundleRequest, *, catalog: Catalog | None = None) -> BundleResult:
    """Prepare one run of `request.task_key`; refuses before writing when a rule fails."""
    root = Path(project_root).resolve()
    key = layout.TaskKey.parse(request.task_key)
    if request.task_type not in TASK_TYPES:
        raise InputError(f"--task-type {request.task_type!r} is not a task type", hint=f"use one of {', '.join(TASK_TYPES)}")
    approved = _stage(request, root, key)
    backend = _backend(request, root)
    lead_pane = _lead_pane(request, backend)
    brief = _brief(request)
    catalog = catalog or catalog_loader.load(root)
    plan = roles.plan(
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

    # Nothing was written so far; from here on the run exists.
    project = layout.for_project(root)
    report_number = layout.peek(project, key, REPORTS)
    run_number, run_id = _claim_run(project, key)
    run = project.run(run_id)
    rel = run.relative

    dispatches = tuple(
        layout.new_attempt(run, worker_id=e.worker_id, role=e.role, provider=e.provider, model_id=e.model_id, attempt=1)
        for e in plan.first_round
    )
    active = ActiveRun(
        run_id=run_id,
        task_key=str(key),
        task_type=request.task_type,
        run_dir=rel(run.dir),
        run_manifest_path=rel(run.manifest),
        phase=PHASE,
        stage=approved,
        allowed_commands=config.allowed_commands(root, approved.number if approved else None),
    )
    manifest = RunManifest(
        run_id=run_id,
        task_key=str(key),
        task_type=request.task_type,
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
    texts = {d.worker_id: prompts.render(manifest, d, catalog, brief=brief, run_layout=run) for d in dispatches}
    # Each dispatch's spend estimate from its prompt, checked against the run's budget (README "Scope and spend").
    estimates = {
        d.worker_id: spend.estimate(
            catalog.provider(d.provider), catalog.provider(d.provider).model(d.model_id), texts[d.worker_id]
        )
        for d in dispatches
    }
    spend.check(request.budget, run_id, 0.0, [(f"{w} (render-bundle)", e) for w, e in estimates.items()])
    team_state = TeamState(run_id, tuple(d.evolve(estimate=estimates[d.worker_id]) for d in dispatches))

    documents = (
        (run.team_state, "team-state", team_state.to_dict()),
        (run.manifest, "run-manifest", manifest.to_dict()),
        (project.active_run, "active-run", active.to_dict()),
    ) + (((run.spend, None, spend.budget_document(request.budget)),) if request.budget else ())
    for path, name, document in documents:  # all checked before the first write
        if name is not None:
            schemas.check_state(name, document, str(path))

    written: list[Path] = []
    for worker_id, text in texts.items():
        path = run.prompt_path(worker_id)
        fsio.atomic_write(path, text)
        written.append(path)
    for folder in (run.results_dir, run.logs_dir, run.reports_dir):
        folder.mkdir(parents=True, exist_ok=True)
    for path, _, document in documents:
        if path == project.active_run:
            active_run.write_file(root, document)  # with its seal (DESIGN §10)
        else:
            fsio.write_json(path, document)
        written.append(path)
    return BundleResult(
        project_root=root,
        run_id=run_id,
        run_number=run_number,
        report_number=report_number,
        run_dir=run.dir,
        run_manifest_path=run.manifest,
        team_state_path=run.team_state,
        active_run_path=active_run.path_for(root),
        prompt_paths={w: run.prompt_path(w) for w in texts},
        manifest=manifest,
        team_state=team_state,
        written=tuple(written),
    )
