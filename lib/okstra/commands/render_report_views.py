"""render-report-views: the self-contained HTML view of a final report."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okstra.core import cli, paths
from okstra.report import views

PROG = "render-report-views"


def _run(args: argparse.Namespace) -> int:
    root = paths.find_project_root(explicit=args.project_root)
    view = views.render_view(root, args.report, args.output)
    if view.translation_missing:
        cli.say(PROG, "note: the translation is missing; the page shows the source report")
    if view.recorded_refused:
        cli.say(PROG, f"warning: {view.recorded_refused}")
    if args.json:
        cli.emit_json(
            {
                "output": paths.relative(root, view.output),
                "report": paths.relative(root, view.report),
                "data": paths.relative(root, view.data),
                "sha256": view.sha256,
                "translation": paths.relative(root, view.translation) if view.translation else None,
                "translationMissing": view.translation_missing,
                "recordedRefused": view.recorded_refused,
            }
        )
    else:
        sys.stdout.write(f"{paths.relative(root, view.output)}\n")
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("report")
    parser.add_argument("--output")
    cli.project_option(parser)
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
