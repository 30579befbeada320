"""`stage-record`: append a finished stage to the task's consumer log (DESIGN §7)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okstra.core import cli, paths
from okstra.core.errors import RefusedError
from okstra.model.layout import TaskKey, for_project
from okstra.report import stage_queue

PROG = "stage-record"


def _run(args: argparse.Namespace) -> int:
    key = TaskKey.parse(args.task_key)
    stage = cli.positive_int(args.stage, "--stage")
    root = paths.find_project_root(explicit=args.project_root)
    project = for_project(root)
    if args.status == "done":
        _scope_gate(root, str(key), stage)
    entry = stage_queue.record(project, key, stage, args.status, args.head_commit)
    ended = _end_stage_run(root, str(key), stage)
    if args.json:
        cli.emit_json({"consumersLog": paths.relative(root, project.consumers_log(key)), **entry.to_dict(), "runEnded": ended})
    else:
        head = f" at {entry.head_commit}" if entry.head_commit else ""
        sys.stdout.write(f"{paths.relative(root, project.consumers_log(key))}: stage {stage} {entry.status}{head}\n")
    if ended:
        cli.say(PROG, f"run {ended} ended: stage {stage}'s write rules are lifted (no active run now)")
    return cli.EXIT_OK


def _scope_gate(root, task_key: str, stage: int) -> None:
    """A stage is recorded done only while stage-check passes, or the user waived each
    path it finds out of scope in a SCOPE WAIVER (DESIGN §10)."""
    from okstra.commands import stage_check
    from okstra.core import git
    from okstra.model.layout import open_run
    from okstra.report import user_response

    manifest = stage_check.run_of_stage(root, task_key, stage)
    if manifest is None or not git.is_repo(root):
        return
    scope = stage_check.check_run(open_run(str(manifest), project_root=root))
    out = [p.change.path for _, v in scope.verdicts for p in v.out_of_scope]
    if not out:
        return
    waived = {p for _, w in user_response.scope_waivers(root, task_key, stage) for p in w.paths}
    left = [p for p in dict.fromkeys(out) if p not in waived]
    if left:
        shown = ", ".join(left[:10]) + (f" and {len(left) - 10} more" if len(left) > 10 else "")
        raise RefusedError(
            f"stage {stage} of {task_key} is not recorded done: stage-check finds {len(left)} path(s) out of its approved scope: {shown}",
            hint="undo or move those changes, or ask the user to waive them "
            '(user-response-write --report PLAN --answers {} --scope-waiver \'{"stage": N, "paths": [...], "reason": "..."}\')',
        )


def _end_stage_run(root, task_key: str, stage: int) -> str | None:
    """A recorded stage ends the active run of that stage (DESIGN §3): its write rules end
    with it. Another run, or none, is left alone. Returns the ended run's id."""
    from okstra.model import active_run
    from okstra.model.layout import open_run
    from okstra.team import lifecycle

    current = active_run.load(root)
    if current is None or current.task_key != task_key or current.stage is None or current.stage.number != stage:
        return None
    lifecycle.end(open_run(None, project_root=root))
    return current.run_id


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("--task-key", required=True)
    parser.add_argument("--stage", required=True)
    parser.add_argument("--status", required=True, choices=stage_queue.STATUSES)
    parser.add_argument("--head-commit")
    parser.add_argument("--project-root")
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
