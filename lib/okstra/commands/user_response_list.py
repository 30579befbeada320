"""`user-response-list`: the user-response sidecars of a run and the blocks each holds (DESIGN §9)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okstra.core import cli
from okstra.core.errors import InputError
from okstra.model.layout import open_run
from okstra.report import user_response

PROG = "user-response-list"


def _run(args: argparse.Namespace) -> int:
    listed = user_response.list_run(open_run(args.run_manifest, project_root=args.project_root))
    broken = [row for row in listed["sidecars"] if "error" in row]
    if args.json:
        cli.emit_json(listed)
    else:
        out = [f"run: {listed['runId']}"]
        if not listed["sidecars"]:
            out.append("  no sidecars yet")
        for row in listed["sidecars"]:
            if "error" in row:
                out.append(f"  {row['sidecar']}  INVALID")
                continue
            answered = ", ".join(row["answered"]) or "none"
            out.append(f"  {row['sidecar']}  answers: {answered}  blocks: {', '.join(row['blocks'])}")
        sys.stdout.write("\n".join(out) + "\n")
    if broken:
        for row in broken[1:]:
            cli.say(PROG, row["error"])
        raise InputError(broken[0]["error"])
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    cli.run_options(parser)
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
