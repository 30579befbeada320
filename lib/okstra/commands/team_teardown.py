"""`team-teardown`: argument handling; the work is okstra.team.lifecycle.teardown."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from okstra.core import cli

PROG = "team-teardown"


def _worktrees(run) -> None:
    """Remove the worktrees this run created (--isolate worktree); say which branches stay."""
    from okstra.team import worktrees

    for removed in worktrees.teardown(run.layout):
        gone = "removed" if removed.removed else "left"
        cli.say(PROG, f"worktree {removed.path} of {removed.worker_id} {gone}; {removed.note}")


def _run(args: argparse.Namespace) -> int:
    from okstra.commands.team_reclaim import report
    from okstra.model.layout import open_run
    from okstra.team import lifecycle

    run = open_run(args.run_manifest, project_root=args.project_root)
    grace = lifecycle.DEFAULT_GRACE if args.grace is None else args.grace
    outcome = lifecycle.teardown(run, dry_run=args.dry_run, grace=grace)
    report(PROG, outcome, args.json, "phase-teardown")
    if not args.dry_run:
        _worktrees(run)
    if outcome.survivors:
        cli.say(PROG, f"processes still running after SIGKILL: {' '.join(map(str, outcome.survivors))}")
        return cli.EXIT_NO
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    cli.run_options(parser)
    parser.add_argument("--grace", type=cli.seconds(maximum=600, zero=True), default=None, metavar="SECONDS")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--json", action="store_true")

    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
