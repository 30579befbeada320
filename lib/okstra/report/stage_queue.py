"""The stage queue (DESIGN §7): which stages of a plan are done, failed or next.

The task's consumer log (`ProjectLayout.consumers_log(task_key)`,
`consumers.jsonl`) holds one JSON line per finished stage:
`{"stage": N, "status": "done"|"failed", "headCommit": SHA|null, "recordedAt": ISO}`.
A stage's status is its latest line. A `failed` stage stops the queue until it
is recorded `done`; a `done` stage is final (recording it again is refused).
Appends happen under the log's lock, check and write inside it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra.core import fsio, git, paths
from okstra.core.clock import now_iso
from okstra.core.errors import InputError, RefusedError, StateError
from okstra.model.active_run import ApprovedStage, PlannedStage
from okstra.model.layout import ProjectLayout, TaskKey, for_project
from okstra.report.stage_map import StageMap

STATUSES = ("done", "failed")
_SHA = re.compile(r"[0-9a-f]{7,40}")


@dataclass(frozen=True)
class Record:
    stage: int
    status: str
    head_commit: str | None
    recorded_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "status": self.status, "headCommit": self.head_commit, "recordedAt": self.recorded_at}


def check_sha(value: str, source: str = "--head-commit") -> str:
    sha = value.strip().lower()
    if not _SHA.fullmatch(sha):
        raise InputError(
            f"{source}: {value[:60]!r} is not a commit SHA", hint="give 7 to 40 hex digits, e.g. $(git rev-parse HEAD)"
        )
    return sha


def _key(task_key: TaskKey | str) -> TaskKey:
    return task_key if isinstance(task_key, TaskKey) else TaskKey.parse(task_key)


def _parse_log(text: str, source: str) -> list[Record]:
    records: list[Record] = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise StateError(f"{where}: not valid JSON: {exc.msg}") from None
        if not isinstance(raw, dict):
            raise StateError(f"{where}: expected a JSON object")
        stage, status, sha, at = raw.get("stage"), raw.get("status"), raw.get("headCommit"), raw.get("recordedAt")
        if type(stage) is not int or stage < 1:
            raise StateError(f"{where}: stage: {stage!r} is not a positive whole number")
        if status not in STATUSES:
            raise StateError(f"{where}: status: {status!r} is not one of {', '.join(STATUSES)}")
        if sha is not None and (not isinstance(sha, str) or not _SHA.fullmatch(sha)):
            raise StateError(f"{where}: headCommit: {sha!r} is not a commit SHA")
        if status == "done" and sha is None:
            raise StateError(f"{where}: headCommit: a done stage needs its head commit")
        if not isinstance(at, str) or not at:
            raise StateError(f"{where}: recordedAt: missing")
        records.append(Record(stage, status, sha, at))
    return records


def read_log(project: ProjectLayout, task_key: TaskKey | str) -> list[Record]:
    path = project.consumers_log(_key(task_key))
    if not path.exists():
        return []
    return _parse_log(fsio.read_text(path, what="consumer log"), paths.relative(project.root, path))


def latest(records: list[Record]) -> dict[int, Record]:
    status: dict[int, Record] = {}
    for r in records:
        status[r.stage] = r
    return status


def record(
    project: ProjectLayout, task_key: TaskKey | str, stage: int, status: str, head_commit: str | None, *, now: str | None = None
) -> Record:
    """Append one finished stage to the task's consumer log, under its lock."""
    key = _key(task_key)
    if type(stage) is not int or stage < 1:
        raise InputError(f"--stage: {stage!r} is not a positive whole number")
    if status not in STATUSES:
        raise InputError(f"--status: {status!r} is not one of {', '.join(STATUSES)}")
    sha = None if head_commit is None else check_sha(head_commit)
    if status == "done" and sha is None:
        raise InputError("--head-commit: required when the status is done")
    entry = Record(stage, status, sha, now or now_iso("seconds"))
    path = project.consumers_log(key)
    with fsio.locked(path):
        existing = fsio.read_text(path, what="consumer log") if path.exists() else ""
        previous = latest(_parse_log(existing, paths.relative(project.root, path))).get(stage)
        if previous is not None and previous.status == "done":
            raise RefusedError(
                f"stage {stage} of {key} is already recorded done (head {previous.head_commit}, {previous.recorded_at})",
                hint="a done stage is final; nothing was written",
            )
        if existing and not existing.endswith("\n"):
            existing += "\n"
        fsio.atomic_write(path, existing + json.dumps(entry.to_dict(), ensure_ascii=False) + "\n")
    return entry


@dataclass(frozen=True)
class QueueState:
    order: tuple[int, ...]
    done: tuple[int, ...]
    failed: Record | None  # the failed stage that stops the queue, if any
    next: int | None
    state: str  # "ready" (next is runnable), "stopped" (a stage failed), "complete", "blocked"

    def to_dict(self) -> dict[str, Any]:
        return {
            "order": list(self.order),
            "done": list(self.done),
            "failed": None if self.failed is None else self.failed.to_dict(),
            "next": self.next,
            "state": self.state,
        }


def queue_state(project: ProjectLayout, task_key: TaskKey | str, stage_map: StageMap) -> QueueState:
    key = _key(task_key)
    status = latest(read_log(project, key))
    known = {r.stage for r in stage_map.rows}
    strays = sorted(set(status) - known)
    if strays:
        raise StateError(
            f"{project.consumers_log(key)}: records stage(s) {', '.join(map(str, strays))} that {stage_map.source} does not have",
            hint="is this the task's current plan?",
        )
    order = tuple(stage_map.order())
    done = tuple(s for s in order if s in status and status[s].status == "done")
    failed = next((status[s] for s in order if s in status and status[s].status == "failed"), None)
    if failed is not None:
        return QueueState(order, done, failed, None, "stopped")
    for stage in order:
        if stage not in done and all(d in done for d in stage_map.row(stage).depends_on):
            return QueueState(order, done, None, stage, "ready")
    return QueueState(order, done, None, None, "complete" if len(done) == len(order) else "blocked")


def base_commit_for(project_layout: ProjectLayout, task_key: TaskKey | str, stage_map: StageMap, n: int) -> str | None:
    """The commit stage `n` starts from: the head commit of its dependency recorded done
    last; None when it depends on nothing. Refused (RefusedError) when the queue is stopped
    by a failed stage, when `n` is already done, or when a dependency is not done."""
    key = _key(task_key)
    known = {r.stage for r in stage_map.rows}
    if n not in known:
        raise RefusedError(f"stage {n} is not in {stage_map.source}", hint=f"stages: {', '.join(map(str, sorted(known)))}")
    records = read_log(project_layout, key)
    status = latest(records)
    failed = [s for s, r in sorted(status.items()) if r.status == "failed"]
    if failed:
        r = status[failed[0]]
        raise RefusedError(
            f"the stage queue of {key} is stopped: stage {r.stage} failed ({r.recorded_at})",
            hint=f"fix stage {r.stage} and record it done with stage-record before preparing stage {n}",
        )
    if n in status:
        raise RefusedError(f"stage {n} of {key} is already done (head {status[n].head_commit})")
    deps = stage_map.row(n).depends_on
    missing = [d for d in deps if d not in status]
    if missing:
        raise RefusedError(
            f"stage {n} depends on stage(s) {', '.join(map(str, missing))} of {key}, not recorded done",
            hint="finish those first (stage-map PLAN --next shows the next stage)",
        )
    if not deps:
        return None
    last = max((i for i, r in enumerate(records) if r.stage in deps and r.status == "done"))
    return records[last].head_commit


def approved_stage(root: Path, task_key: TaskKey, plan_arg: str, n: int) -> PlannedStage:
    """Stage `n` of the approved plan `plan_arg`, and the plan's text for it, for
    render-bundle --stage N --plan PLAN (DESIGN §7).

    The plan is an implementation-planning report of the same task whose sidecar
    holds an approved PLAN DECISION bound to the plan's data as it still is (DESIGN §9); its stage map names the stage's title and
    planned paths; the task's consumer log gives the base commit (the head of the
    dependency recorded done last; with no dependency, the project's HEAD, which
    stage-check compares against, DESIGN §10).
    """
    from okstra.report import stage_map, user_response

    plan = user_response.load_report(root, plan_arg)
    if plan.task_type != "implementation-planning" or plan.task_key != str(task_key):
        raise RefusedError(
            f"--plan {plan_arg!r} is a {plan.task_type} report of {plan.task_key}",
            hint=f"name an implementation-planning report of {task_key}",
        )
    user_response.approved_plan(plan, plan_arg)
    stages = stage_map.load(plan.markdown, root=root)
    row = stages.row(n)
    base = base_commit_for(for_project(root), task_key, stages, n) or git.head(root)
    planned = "\n".join(f"- `{p}`" for p in row.planned_paths) or "- (none listed: ask the lead)"
    text = (
        f"Implementation stage {row.stage} of the approved plan `{plan.run.relative(plan.markdown)}`: **{row.title}**\n\n"
        f"- Steps: {row.step_count}\n- Exit contract: {row.exit_contract_summary}\n"
        f"- Base commit: {base or 'the current HEAD'}\n\n"
        f"Planned paths (the only files this stage may change):\n{planned}\n\n"
        f"Read stage {row.stage} of the plan (and the decisions in its user-response sidecar) before you start."
    )
    return PlannedStage(ApprovedStage(row.stage, row.title, row.planned_paths, base), text)
