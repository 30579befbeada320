"""`prompt-check`: a worker prompt against the dispatch it is for (DESIGN §4)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from okstra.core import cli, paths
from okstra.core.errors import ProblemsFound
from okstra.model.layout import check_worker_id, open_run
from okstra.run import prompts

PROG = "prompt-check"


def _run(args: argparse.Namespace) -> int:
    check_worker_id(args.worker, "--worker")
    run = open_run(args.run_manifest, project_root=args.project_root)
    root = run.root
    found = prompts.check_file(run, args.prompt, args.worker)
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
    cli.run_options(parser, manifest_required=True)
    parser.add_argument("--worker", required=True)
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
