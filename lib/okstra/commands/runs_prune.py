"""`runs-prune`: argument handling; the work is okstra.run.prune."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence

from okstra.core import cli, paths

PROG = "runs-prune"
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def age(text: str) -> float:
    """`30d` -> seconds; a number with one unit of UNITS."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([smhdw])", text.strip())
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not an age such as 90m, 12h, 30d or 8w")
    return float(match.group(1)) * UNITS[match.group(2)]


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n:.1f} GB"


def _run(args: argparse.Namespace) -> int:
    from okstra.run import prune

    root = paths.find_project_root(explicit=args.project_root)
    runs = prune.prune(root, args.older_than, dry_run=args.dry_run)
    if args.json:
        cli.emit_json({"dryRun": args.dry_run, "olderThanSeconds": args.older_than, "runs": [r.to_dict(root) for r in runs]})
        return cli.EXIT_OK
    for run in runs:
        sys.stdout.write(f"{run.run_id}\t{run.age_seconds / 86400:.1f}d\t{_size(run.size_bytes)}\n")
    verb = "would remove" if args.dry_run else "removed"
    cli.say(PROG, f"{verb} {len(runs)} run(s), {_size(sum(r.size_bytes for r in runs))}")
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("--older-than", type=age, required=True, metavar="AGE")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--project-root", metavar="DIR")
    parser.add_argument("--json", action="store_true")

    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
