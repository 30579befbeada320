"""render-final-report: validate report data, render Markdown, keep the last valid input."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okstra.core import cli, paths
from okstra.core.errors import ProblemsFound
from okstra.report import render

PROG = "render-final-report"


def _run(args: argparse.Namespace) -> int:
    root = paths.find_project_root(explicit=args.project_root)
    try:
        done = render.render_final_report(root, args.data, args.output, snapshot=not args.no_snapshot)
    except ProblemsFound as exc:
        if args.json:
            cli.emit_json({"data": args.data, "output": None, "lastValid": None, "problems": exc.problems})
        raise
    for warning in done.warnings:
        cli.say(PROG, warning)
    last_valid = paths.relative(root, done.last_valid) if done.last_valid else None
    if args.json:
        cli.emit_json(
            {
                "data": paths.relative(root, done.data),
                "output": paths.relative(root, done.output),
                "lastValid": last_valid,
                "problems": [],
            }
        )
    else:
        sys.stdout.write(f"{paths.relative(root, done.output)}\n")
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("data")
    parser.add_argument("--output")
    parser.add_argument("--no-snapshot", action="store_true")
    cli.project_option(parser)
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
