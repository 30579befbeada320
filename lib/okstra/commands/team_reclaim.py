"""`team-reclaim`: argument handling; the work is okstra.team.lifecycle.reclaim."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okstra.core import cli

PROG = "team-reclaim"


def report(prog: str, outcome, as_json: bool, checkpoint: str) -> None:
    """Shared by team-reclaim, team-teardown and run-end: data on stdout; on stderr a warning
    line per later step that failed, the PROGRESS checkpoint with details, and the checkpoint
    alone on a line of its own, exactly `PROGRESS: <phase> panes=<n>` (as the lead's skill
    and the original tool print it)."""
    if as_json:
        cli.emit_json(outcome.to_dict())
    elif outcome.dry_run:
        for pane_id, kind, _ in outcome.closed:
            print(f"{pane_id}\t{kind}")
    else:
        for pane_id, kind, worker in outcome.closed:
            print(f"{pane_id}\t{kind}\t{worker}")
    verb = "would close" if outcome.dry_run else "closed"
    extra = f" kept={len(outcome.kept)}" if outcome.action == "reclaim" else f" written-off={len(outcome.written_off)}"
    for warning in outcome.warnings:
        cli.say(prog, f"warning: {warning}")
    cli.say(prog, f"PROGRESS: {checkpoint} panes={len(outcome.closed)} ({verb}; backend={outcome.backend}){extra}")
    sys.stderr.write(f"PROGRESS: {checkpoint} panes={len(outcome.closed)}\n")
    sys.stderr.flush()
    if outcome.run_ended:
        cli.say(prog, f"run {outcome.run_id} ended ({outcome.final_status or 'no final status'}): no active run now")


def _run(args: argparse.Namespace) -> int:
    from okstra.model.layout import open_run
    from okstra.team import lifecycle

    run = open_run(args.run_manifest, project_root=args.project_root)
    checkpoint = "phase-gate-cleanup" if args.gate else "phase-batch-cleanup"
    outcome = lifecycle.reclaim(run, dry_run=args.dry_run, gate=args.gate)
    report(PROG, outcome, args.json, checkpoint)
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    cli.run_options(parser)
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--gate", action="store_true")
    parser.add_argument("--json", action="store_true")

    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
