"""report-draft: write a run's report data from okstra's records and the report writer's content."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from okstra.core import cli
from okstra.report import draft
from okstra.team import context

PROG = "report-draft"


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("--run-manifest")
    parser.add_argument("--owner", default="the user")
    parser.add_argument("--skeleton", action="store_true")
    parser.add_argument("--json", action="store_true")

    def body() -> int:
        args = parser.parse_args(argv)
        run = context.open_run(args.run_manifest)
        made = draft.draft(run.root, run.manifest_path, owner=args.owner, skeleton_only=args.skeleton)
        rel = run.layout.relative(made.data_path)
        if args.json:
            cli.emit_json(
                {"runId": run.manifest.run_id, "reportData": rel, "reportAuthor": made.document["header"]["reportAuthor"]}
            )
        else:
            sys.stdout.write(rel + "\n")
        return cli.EXIT_OK

    return cli.run(PROG, body)
