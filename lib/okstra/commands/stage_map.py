"""`stage-map`: check a plan's Stage Map; print its stages, order and next stage (DESIGN §7)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from okstra.core import cli, fsio, paths
from okstra.core.errors import InputError
from okstra.model.layout import TaskKey, for_project
from okstra.report import stage_map, stage_queue
from okstra.report.user_response import one_line

PROG = "stage-map"


def _task_key(args: argparse.Namespace, smap: stage_map.StageMap) -> TaskKey:
    if args.task_key:
        return TaskKey.parse(args.task_key)
    if smap.origin == "data":
        header = fsio.read_json(smap.source).get("header")
        if isinstance(header, dict) and isinstance(header.get("taskKey"), str):
            return TaskKey.parse(header["taskKey"], source=f"{smap.source}: $.header.taskKey")
    raise InputError("--next needs --task-key (the plan names no task)", hint="pass --task-key GROUP/ID")


def _queue_text(q: stage_queue.QueueState, smap: stage_map.StageMap) -> str:
    if q.state == "stopped" and q.failed:
        return (
            f"next: none, the queue is stopped: stage {q.failed.stage} failed ({q.failed.recorded_at}); record it done once fixed"
        )
    if q.state == "complete":
        return "next: none, every stage is done"
    if q.state == "blocked" or q.next is None:
        return "next: none, no stage has all its dependencies done"
    return f"next: stage {q.next} ({one_line(smap.row(q.next).title, 200)})"


def _run(args: argparse.Namespace) -> int:
    root = paths.find_project_root(explicit=args.project_root)
    plan = paths.argument(root, args.plan, source="PLAN")
    smap = stage_map.load(plan, root=root)
    doc: dict[str, Any] = {
        "plan": paths.relative(root, plan),
        "source": paths.relative(root, smap.source),
        "stages": [r.to_dict() for r in smap.rows],
        "order": smap.order(),
    }
    queue = None
    if args.next:
        key = _task_key(args, smap)
        queue = stage_queue.queue_state(for_project(root), key, smap)
        doc["queue"] = {"taskKey": str(key), **queue.to_dict()}
    if args.json:
        cli.emit_json(doc)
        return cli.EXIT_OK
    done = set(queue.done) if queue else set()
    out = [f"stage map: {doc['source']} ({len(smap.rows)} stages)"]
    for r in smap.rows:
        deps = ", ".join(map(str, r.depends_on)) or "none"
        mark = (
            "  [done]" if r.stage in done else ("  [failed]" if queue and queue.failed and queue.failed.stage == r.stage else "")
        )
        out.append(f"  {r.stage}. {one_line(r.title, 200)}  (depends on: {deps}; steps: {r.step_count}){mark}")
        out.append(f"     exit: {one_line(r.exit_contract_summary, 200)}")
    out.append("order: " + " -> ".join(map(str, doc["order"])))
    if queue:
        out.append(_queue_text(queue, smap))
    sys.stdout.write("\n".join(out) + "\n")
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("plan")
    parser.add_argument("--task-key")
    parser.add_argument("--next", action="store_true")
    parser.add_argument("--project-root")
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
