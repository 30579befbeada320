"""report-draft: write a run's report data from okstra's records and the report writer's content."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okstra.core import cli
from okstra.model.layout import open_run
from okstra.report import draft

PROG = "report-draft"


def _run(args: argparse.Namespace) -> int:
    run = open_run(args.run_manifest, project_root=args.project_root)
    made = draft.draft(run, owner=args.owner, skeleton_only=args.skeleton)
    rel = run.layout.relative(made.data_path)
    if args.json:
        cli.emit_json({"runId": run.manifest.run_id, "reportData": rel, "reportAuthor": made.document["header"]["reportAuthor"]})
    else:
        sys.stdout.write(rel + "\n")
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    cli.run_options(parser)
    parser.add_argument("--owner", default="the user")
    parser.add_argument("--skeleton", action="store_true")
    parser.add_argument("--json", action="store_true")

    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
