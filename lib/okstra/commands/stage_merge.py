"""`stage-merge`: bring an isolated implementer's worktree back into the project (DESIGN §10).

Only an approved, in-scope worktree is merged: the run has an approved stage and
`stage-check` finds nothing out of scope in that worktree. Fast-forward when the
project's branch has not moved, else a merge commit; a conflict aborts the merge
(nothing changes) and is answered no with one line per conflicting path.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okstra.core import cli, git
from okstra.core.errors import ProblemsFound, RefusedError
from okstra.model.layout import check_worker_id, open_run

PROG = "stage-merge"


def _run(args: argparse.Namespace) -> int:
    from okstra.commands import stage_check
    from okstra.team import worktrees

    worker = check_worker_id(args.worker, "--worker")
    run = open_run(args.run_manifest, project_root=args.project_root)
    layout = run.layout
    if worktrees.entry(layout, worker) is None:
        known = ", ".join(e.worker_id for e in worktrees.entries(layout)) or "none"
        raise RefusedError(f"--worker {worker}: no worktree of run {layout.run_id}", hint=f"worktrees: {known}")
    scope = stage_check.check_run(run)
    out = scope.out_of_scope(worker)
    if out:
        raise ProblemsFound(
            [f"out of scope in {worker}'s worktree: {p}" for p in out],
            summary=f"{worker}'s worktree is not merged: {len(out)} path(s) out of scope (stage-check lists them)",
        )
    try:
        merged = worktrees.merge(layout, worker)
    except git.MergeConflict as exc:
        raise ProblemsFound(
            [f"conflict: {p}" for p in exc.paths]
            + [f"{worker}'s branch {exc.branch} was not merged: the merge was aborted and nothing changed"],
        ) from None
    if args.json:
        cli.emit_json({"runId": layout.run_id, **merged.to_dict()})
    else:
        head = merged.head[:12] if merged.head else "-"
        sys.stdout.write(f"{worker}: {merged.branch} merged ({merged.how}) at {head}\n")
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("--worker", required=True, metavar="ID")
    cli.run_options(parser)
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
