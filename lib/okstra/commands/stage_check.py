"""`stage-check`: what changed since the stage's base vs the approved scope (DESIGN §10).

The command gathers the facts from the rooms that own them (the run and its
team state, the run's worktrees from `team.worktrees`) and hands them to
`harness.stage_scope`, which judges each change. `stage-record --status done`
and `stage-merge` ask the same `check_run()`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra.core import cli, git, paths
from okstra.core.errors import InputError
from okstra.harness import stage_scope
from okstra.harness.stage_scope import ScopeVerdict, Writer
from okstra.model import active_run, run_manifest, team_state
from okstra.model.active_run import ApprovedStage
from okstra.model.layout import Run, RunLayout, open_run
from okstra.model.run_manifest import RunManifest

PROG = "stage-check"


@dataclass(frozen=True)
class RunScope:
    run_id: str
    stage: ApprovedStage
    verdicts: tuple[tuple[str | None, ScopeVerdict], ...]  # (worktree owner or None for the project, verdict)

    @property
    def ok(self) -> bool:
        return all(v.ok for _, v in self.verdicts)

    def out_of_scope(self, worker: str | None = None) -> list[str]:
        return [
            f"{v.tree}/{p.change.path}" if v.tree != "." else p.change.path
            for owner, v in self.verdicts
            if worker is None or owner == worker
            for p in v.out_of_scope
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "stage": self.stage.to_dict(),
            "verdict": stage_scope.IN_SCOPE if self.ok else stage_scope.OUT_OF_SCOPE,
            "trees": [{"worktreeOf": owner, **v.to_dict()} for owner, v in self.verdicts],
        }


def approved_stage(root: Path, manifest: RunManifest) -> ApprovedStage | None:
    """The run's approved stage: from the active run when it is this run, else as the
    manifest recorded it at render time."""
    active = active_run.load(root)
    if active is not None and active.run_id == manifest.run_id:
        return active.stage
    raw = manifest.active_run_context.get("approvedStage") if manifest.active_run_context else None
    if not raw:
        return None
    return active_run.from_dict({**_RUN_STUB, "approvedStage": raw}, f"{manifest.run_id} run manifest").stage


_RUN_STUB = {"runId": "-", "taskKey": "-", "taskType": "-", "runDir": "-", "runManifestPath": "-"}


def writers(root: Path, layout: RunLayout, dispatches: Sequence[Any]) -> list[tuple[Writer, Path]]:
    """Each dispatch as a writer (its own result and evidence) with its scope record."""
    out = []
    for d in dispatches:
        result = str(paths.resolve_inside(root, d.result_path, source="resultPath")) if d.result_path else None
        evidence = str(layout.evidence_dir(d.worker_id))
        out.append((Writer(d.worker_id, d.role, result, evidence), layout.scope_record_path(d.worker_id, d.attempt)))
    return out


def run_of_stage(root: Path, task_key: str, stage: int) -> Path | None:
    """The manifest of the newest run of `task_key` that rendered `stage` (None: no such run)."""
    from okstra.model.layout import TaskKey, for_project

    key = TaskKey.parse(task_key)
    project = for_project(root)
    runs = project.okstra_dir / "runs"
    if not runs.is_dir():
        return None
    for folder in sorted(runs.glob(f"{key.group}--{key.task_id}--r*"), reverse=True):
        path = project.run(folder.name).manifest
        if path.is_file() and run_manifest.load(path).stage == stage:
            return path
    return None


def check_run(run: Run, *, base: str | None = None) -> RunScope:
    from okstra.team import worktrees

    root, manifest, layout = run.root, run.manifest, run.layout
    stage = approved_stage(root, manifest)
    if stage is None:
        raise InputError(
            f"run {manifest.run_id} has no approved stage",
            hint="stage-check checks an implementation stage (render-bundle --stage N --plan PLAN)",
        )
    if not git.is_repo(root):
        raise InputError(f"{root} is not a git repository", hint="stage-check reads what changed from git")
    if base is not None:
        base = git.commit_of(root, base, "--base")
    state = run.state()
    recorded = writers(root, layout, state.dispatches)
    by_worker = {w.worker_id: w for w, _ in recorded}
    verdicts: list[tuple[str | None, ScopeVerdict]] = [
        (None, stage_scope.check(root, stage, base=base, writers=stage_scope.written_by(recorded)))
    ]
    for found in worktrees.entries(layout):
        tree = worktrees.tree_of(layout, found.worker_id)
        if tree is None or not tree.is_dir():
            continue
        owner = by_worker.get(found.worker_id) or Writer(found.worker_id, "implementer")
        verdicts.append((found.worker_id, stage_scope.check(root, stage, tree=tree, base=found.base, default=owner)))
    return RunScope(manifest.run_id, stage, tuple(verdicts))


def print_scope(scope: RunScope, out: Any = None) -> None:
    out = out or sys.stdout
    title = f" ({scope.stage.title})" if scope.stage.title else ""
    out.write(f"stage {scope.stage.number}{title} of {scope.run_id}\n")
    for owner, v in scope.verdicts:
        where = "project" if owner is None else f"worktree of {owner} ({v.tree})"
        base = v.base[:12] if v.base else "the empty tree"
        out.write(f"{where}: {len(v.paths)} changed since {base}, {len(v.out_of_scope)} out of scope\n")
        for p in sorted(v.paths, key=lambda p: (p.in_scope, p.change.path)):
            name = f"{p.change.old} -> {p.change.path}" if p.change.old else p.change.path
            mark = "OUT" if not p.in_scope else "ok "
            who = p.worker or "unknown writer"
            why = f"  (outside {p.why})" if not p.in_scope else ""
            out.write(f"  {mark} {p.change.status} {name}  by {who}{why}\n")


def _run(args: argparse.Namespace) -> int:
    scope = check_run(open_run(args.run_manifest, project_root=args.project_root), base=args.base)
    if args.json:
        cli.emit_json(scope.to_dict())
    else:
        print_scope(scope)
    if not scope.ok:
        cli.say(PROG, f"{len(scope.out_of_scope())} path(s) out of the approved scope: {', '.join(scope.out_of_scope()[:5])}")
        return cli.EXIT_NO
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    cli.run_options(parser)
    parser.add_argument("--base", metavar="COMMIT")
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))


# ---------------------------------------------------------------- at each worker's start and end (worker-run)


@dataclass(frozen=True)
class WorkerScope:
    root: Path
    layout: RunLayout
    state_path: Path
    worker_id: str
    attempt: int
    writer: Writer
    stage: ApprovedStage | None
    tree: Path

    @property
    def record(self) -> Path:
        return self.layout.scope_record_path(self.worker_id, self.attempt)


def begin_worker(run: Run, worker_id: str, attempt: int | None) -> WorkerScope | None:
    """Snapshot what is already changed before a worker runs, so only its own changes
    are blamed on it; None when there is nothing to check (not a git repository)."""
    from okstra.team import worktrees

    root = run.root
    if not git.is_repo(root):
        return None
    manifest, layout, state_path = run.manifest, run.layout, run.team_state_path
    d = team_state.load(state_path).find(worker_id, attempt)
    if d.terminal:  # written off meanwhile (teardown): its record stands
        return None
    ((writer, _),) = writers(root, layout, [d])
    stage = approved_stage(root, manifest)
    tree = worktrees.tree_of(layout, worker_id) or root
    scope = WorkerScope(root, layout, state_path, worker_id, d.attempt, writer, stage, tree)
    base = stage.base_commit if stage and stage.base_commit and tree == root else git.head(tree)
    stage_scope.begin(scope.record, tree, base, writer)
    return scope


def end_worker(scope: WorkerScope) -> tuple[Any, ScopeVerdict | None]:
    """Judge what the worker changed: the ScopeCheck for its terminal record, and the verdict."""
    from okstra.model.dispatch import ScopeCheck

    verdict = stage_scope.finish(scope.record, scope.root, scope.stage, scope.writer, own_tree=scope.tree != scope.root)
    if verdict is None:
        return ScopeCheck(stage_scope.NOT_CHECKED, note="no start snapshot was recorded"), None
    out = tuple(p.change.path for p in verdict.out_of_scope)
    state = stage_scope.IN_SCOPE if verdict.ok else stage_scope.OUT_OF_SCOPE
    return ScopeCheck(state, out, scope.layout.relative(scope.record)), verdict
