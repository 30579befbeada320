"""`user-response-import`: bring a sidecar exported from the HTML view back into its run (DESIGN §9)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from okstra.commands.user_response_write import print_result
from okstra.core import cli, paths
from okstra.core.errors import UsageError
from okstra.report import user_response

PROG = "user-response-import"


def _run(args: argparse.Namespace) -> int:
    root = paths.find_project_root(explicit=args.project_root)
    if (args.file is None) == (not args.from_downloads):
        raise UsageError("give either FILE or --from-downloads", hint=f"see {PROG} --help")
    if args.from_downloads:
        name = user_response.load_report(root, args.report).sidecar.name if args.report else None
        file = user_response.newest_export(user_response.download_folders(os.environ), name)
        cli.say(PROG, f"importing {file}")
    else:
        file = Path(args.file).expanduser()
    result = user_response.import_export(root, file, str(file), args.report, user_response.recorder(os.environ))
    print_result(PROG, result, args.json)
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("file", nargs="?")
    parser.add_argument("--from-downloads", action="store_true")
    parser.add_argument("--report")
    parser.add_argument("--project-root")
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
