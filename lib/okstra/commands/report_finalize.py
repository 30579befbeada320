"""report-finalize: the run's end-of-report step."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okstra.core import cli, paths
from okstra.model.layout import open_run
from okstra.report import finalize

PROG = "report-finalize"


def _run(args: argparse.Namespace) -> int:
    run = open_run(args.run_manifest, project_root=args.project_root)
    root = run.root
    done = finalize.finalize(run)
    for warning in done.warnings:
        cli.say(PROG, warning)

    def rel(path):
        return paths.relative(root, path) if path else None

    doc = {
        "manifest": rel(done.manifest),
        "reportNumber": done.report_number,
        "runNumber": done.run_number,
        "data": rel(done.data),
        "markdown": rel(done.markdown),
        "lastValid": rel(done.last_valid),
        "html": rel(done.html),
        "sidecar": rel(done.sidecar),
        "finalStatus": done.final_status,
    }
    if args.json:
        cli.emit_json(doc)
    else:
        width = max(len(k) for k in doc)
        sys.stdout.write("".join(f"{k.ljust(width)}  {v}\n" for k, v in doc.items() if v is not None))
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    cli.run_options(parser)
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
