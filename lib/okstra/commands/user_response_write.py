"""`user-response-write`: merge the user's answers and decisions into a report's sidecar (DESIGN §9).

Who records is read from the environment (`user_response.recorder`): from inside a Claude Code
session or a worker, decision blocks are refused and answers are marked relayed by the lead.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from okstra.core import cli, paths
from okstra.core.errors import UsageError
from okstra.report import user_response

PROG = "user-response-write"


def print_result(prog: str, result: user_response.WriteResult, as_json: bool) -> None:
    """The sidecar path on stdout (or the JSON result); what changed on stderr."""
    if as_json:
        cli.emit_json(result.to_dict())
        return
    sys.stdout.write(result.sidecar + "\n")
    if not result.changed:
        cli.say(prog, "nothing changed: the sidecar already held these answers")
    for line in result.changes:
        cli.say(prog, line)


def _run(args: argparse.Namespace) -> int:
    root = paths.find_project_root(explicit=args.project_root)
    recorded_by = user_response.recorder(os.environ)
    if args.interactive:
        from okstra.commands import user_response_dialogue

        return user_response_dialogue.run(PROG, root, args, recorded_by, print_result)
    if args.answers is None:
        raise UsageError("--answers is required (or --interactive)", hint=f"see {PROG} --help")
    answers = sys.stdin.read() if args.answers == "-" else args.answers
    result = user_response.write(
        root,
        args.report,
        answers,
        plan_decision=args.plan_decision,
        analysis_review=args.analysis_review,
        direction_selection=args.direction_selection,
        report_authoring=args.report_authoring,
        scope_waiver=args.scope_waiver,
        recorded_by=recorded_by,
    )
    print_result(PROG, result, args.json)
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("--report", required=True)
    parser.add_argument("--answers")
    parser.add_argument("--interactive", action="store_true")
    parser.add_argument("--plan-decision")
    parser.add_argument("--analysis-review")
    parser.add_argument("--direction-selection")
    parser.add_argument("--report-authoring")
    parser.add_argument("--scope-waiver")
    parser.add_argument("--project-root")
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
