"""`run-end`: argument handling; the work is okstra.team.lifecycle.abandon (DESIGN §3, §6)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from okstra.core import cli

PROG = "run-end"


def _run(args: argparse.Namespace) -> int:
    from okstra.commands.team_reclaim import report
    from okstra.model.layout import open_run
    from okstra.team import lifecycle

    run = open_run(args.run_manifest, project_root=args.project_root)
    grace = lifecycle.DEFAULT_GRACE if args.grace is None else args.grace
    outcome = lifecycle.abandon(run, grace=grace)
    report(PROG, outcome, args.json, "phase-run-end")
    if outcome.survivors:
        cli.say(PROG, f"processes still running after SIGKILL: {' '.join(map(str, outcome.survivors))}")
        return cli.EXIT_NO
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    cli.run_options(parser)
    parser.add_argument("--grace", type=cli.seconds(maximum=600, zero=True), default=None, metavar="SECONDS")
    parser.add_argument("--json", action="store_true")

    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
