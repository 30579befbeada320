"""`prompt-check`: a worker prompt against the dispatch it is for (DESIGN §4)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from okstra.core import cli, paths
from okstra.core.errors import ProblemsFound
from okstra.run import prompts

PROG = "prompt-check"


def _run(args: argparse.Namespace) -> int:
    root = paths.find_project_root(explicit=args.project_root)
    found = prompts.check_file(root, args.prompt, args.run_manifest, args.worker)
    if args.json:
        cli.emit_json(
            {
                "prompt": paths.relative(root, found.prompt),
                "worker": args.worker,
                "ok": not found.problems,
                "problems": found.problems,
            }
        )
        return cli.EXIT_NO if found.problems else cli.EXIT_OK
    if found.problems:
        raise ProblemsFound(found.problems)
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("prompt")
    parser.add_argument("--run-manifest", required=True)
    parser.add_argument("--worker", required=True)
    parser.add_argument("--project-root")
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
