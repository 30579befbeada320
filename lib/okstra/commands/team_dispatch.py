"""`team-dispatch`: argument handling; the work is okstra.team.dispatch."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from okstra.core import cli

PROG = "team-dispatch"


def _budget(run):
    """The run's budget as render-bundle recorded it, else `budget-usd` in config."""
    from okstra.commands.render_bundle import budget_of
    from okstra.core import fsio
    from okstra.model import spend

    if run.layout.spend.exists():
        return spend.budget_from(fsio.read_json(run.layout.spend, what="spend file"), str(run.layout.spend))
    return budget_of(run.root, None)


def _failover(run):
    """Stand-ins for the rate-limited workers (run.failover decides and records them)."""
    from okstra.model.dispatch import BREAKER_OPEN
    from okstra.run import catalog, config, failover

    value = config.effective("failover", run.root)
    plan = failover.plan(run.layout, run.manifest, catalog.load(run.root), value.value if value else {})
    for s in plan.stand_ins:
        cli.say(PROG, f"failover: {s.dispatch.stand_in_text()}")
    for line in plan.skipped:
        cli.say(PROG, f"failover: {line}")
    if plan.breakers:
        cli.say(PROG, f"failover: {BREAKER_OPEN}: {', '.join(plan.breakers)}")
    return plan


def _failover_doc(plan) -> dict:
    return {
        "standIns": [s.to_dict() for s in plan.stand_ins],
        "skipped": list(plan.skipped),
        "breakerOpen": list(plan.breakers),
    }


def _run(args: argparse.Namespace) -> int:
    from okstra.model.layout import open_run
    from okstra.run import prompts
    from okstra.team import dispatch

    run = open_run(args.run_manifest, project_root=args.project_root)
    workers, stood_in = args.worker, None
    if args.failover:
        stood_in = _failover(run)
        if not stood_in.stand_ins:
            if args.json:
                cli.emit_json({"runId": run.manifest.run_id, "dispatched": [], "failover": _failover_doc(stood_in)})
            cli.say(PROG, "no rate-limited worker to fail over")
            return cli.EXIT_OK
        run = open_run(args.run_manifest, project_root=args.project_root)  # the manifest may name the stand-ins now
        workers = [*workers, *(s.dispatch.worker_id for s in stood_in.stand_ins)]
    outcome = dispatch.dispatch(
        run,
        prompts.checker(run.root, run.manifest),
        round_name=args.round,
        workers=workers,
        redispatch=args.redispatch,
        budget=_budget(run),
        launch_gate=run.layout.launch_gate,
    )
    if args.json:
        doc = outcome.to_dict()
        if stood_in is not None:
            doc["failover"] = _failover_doc(stood_in)
        cli.emit_json(doc)
    else:
        for d in outcome.dispatched:
            print(f"{d.worker_id}\t{d.attempt}\t{d.pane_id or '-'}\t{d.pid or '-'}")
    panes = sum(1 for d in outcome.dispatched if d.pane_id)
    cli.say(PROG, f"PROGRESS: phase-dispatch workers={len(outcome.dispatched)} panes={panes} backend={outcome.backend}")
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    cli.run_options(parser)
    parser.add_argument("--round", metavar="NAME")
    parser.add_argument("--worker", action="append", default=[], metavar="ID")
    parser.add_argument("--redispatch", action="append", default=[], metavar="ID")
    parser.add_argument("--failover", action="store_true")
    parser.add_argument("--json", action="store_true")

    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
