"""`stage-record`: append a finished stage to the task's consumer log (DESIGN §7)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okstra.core import cli, paths
from okstra.core.errors import InputError
from okstra.report import stage_queue
from okstra.run.layout import TaskKey, for_project

PROG = "stage-record"


def _stage(text: str) -> int:
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        raise InputError(f"--stage: {text[:40]!r} is not a positive whole number")
    return int(text)


def _run(args: argparse.Namespace) -> int:
    key = TaskKey.parse(args.task_key)
    stage = _stage(args.stage)
    root = paths.find_project_root(explicit=args.project_root)
    project = for_project(root)
    entry = stage_queue.record(project, key, stage, args.status, args.head_commit)
    if args.json:
        cli.emit_json({"consumersLog": paths.relative(root, project.consumers_log(key)), **entry.to_dict()})
    else:
        head = f" at {entry.head_commit}" if entry.head_commit else ""
        sys.stdout.write(f"{paths.relative(root, project.consumers_log(key))}: stage {stage} {entry.status}{head}\n")
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("--task-key", required=True)
    parser.add_argument("--stage", required=True)
    parser.add_argument("--status", required=True, choices=stage_queue.STATUSES)
    parser.add_argument("--head-commit")
    parser.add_argument("--project-root")
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
