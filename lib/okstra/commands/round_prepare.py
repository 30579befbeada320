"""round-prepare: add a later round (report writer, re-verification, critique, translation)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okstra.core import cli
from okstra.model.layout import open_run
from okstra.run import rounds

PROG = "round-prepare"


def _run(args: argparse.Namespace) -> int:
    run = open_run(args.run_manifest, project_root=args.project_root)
    prepared = rounds.prepare(run, args.role, tuple(args.worker))
    if args.json:
        cli.emit_json(prepared.to_dict())
    else:
        for d in prepared.dispatches:
            sys.stdout.write(f"{d.worker_id}\tattempt {d.attempt}\t{d.prompt_path}\n")
        cli.say(PROG, f"next: team-dispatch --round {prepared.round}")
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    cli.run_options(parser)
    parser.add_argument("--role", required=True)
    parser.add_argument("--worker", action="append", default=[])
    parser.add_argument("--json", action="store_true")

    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
