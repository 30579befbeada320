"""`user-response-write`: merge the user's answers and decisions into a report's sidecar (DESIGN §9)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okstra.core import cli, paths
from okstra.report import user_response

PROG = "user-response-write"


def _run(args: argparse.Namespace) -> int:
    root = paths.find_project_root(explicit=args.project_root)
    result = user_response.write(
        root,
        args.report,
        args.answers,
        plan_decision=args.plan_decision,
        analysis_review=args.analysis_review,
        direction_selection=args.direction_selection,
        report_authoring=args.report_authoring,
    )
    if args.json:
        cli.emit_json(result.to_dict())
    else:
        sys.stdout.write(result.sidecar + "\n")
        if not result.changed:
            cli.say(PROG, "nothing changed: the sidecar already held these answers")
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("--report", required=True)
    parser.add_argument("--answers", required=True)
    parser.add_argument("--plan-decision")
    parser.add_argument("--analysis-review")
    parser.add_argument("--direction-selection")
    parser.add_argument("--report-authoring")
    parser.add_argument("--project-root")
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
