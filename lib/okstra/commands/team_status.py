"""`team-status`: argument handling; the work is okstra.team.status."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from okstra.core import cli

PROG = "team-status"


def _spend(run, state):
    """Spent (recorded usage) vs the run's budget, per worker and in total (README "Scope and spend")."""
    from okstra.commands.team_dispatch import _budget
    from okstra.model import spend
    from okstra.run import catalog

    loaded = catalog.load(run.root)
    return spend.Summary(tuple(spend.lines(state.dispatches, loaded)), _budget(run), spend.prices_as_of(loaded))


def _run(args: argparse.Namespace) -> int:
    from okstra.model.layout import open_run
    from okstra.team import liveness, status

    run = open_run(args.run_manifest, project_root=args.project_root)
    state = run.state()  # read and checked once (DESIGN §14); everything below is about this state
    limits = {
        "max_idle": args.max_idle or liveness.DEFAULT_MAX_IDLE,
        "launch_grace": args.launch_grace or liveness.DEFAULT_LAUNCH_GRACE,
        "idle_window": args.idle_window or liveness.DEFAULT_IDLE_WINDOW,
    }
    if args.explain is not None:
        state.find(args.explain)  # an unknown worker: exit 2, naming the known ones
        row = next(r for r in status.table(run, state, **limits) if r.dispatch.worker_id == args.explain)
        if args.json:
            cli.emit_json({"runId": run.manifest.run_id, **row.to_dict()})
        else:
            print(status.explain(row))
        return cli.EXIT_OK
    rows = status.table(run, state, all_attempts=args.all, **limits)
    summary = _spend(run, state)
    if args.json:
        cli.emit_json(
            {
                "runId": run.manifest.run_id,
                "backend": run.manifest.terminal_backend,
                "workers": [r.to_dict() for r in rows],
                "failover": status.failover_doc(state),
                "spend": summary.to_dict(),
            }
        )
    else:
        print(status.render(rows))
        failover = status.failover_lines(state)
        if failover:
            print()
            print("\n".join(failover))
        print()
        print(summary.render())
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    cli.run_options(parser)
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--explain", metavar="WORKER")
    parser.add_argument("--max-idle", type=cli.seconds(), default=None, metavar="SECONDS")
    parser.add_argument("--launch-grace", type=cli.seconds(), default=None, metavar="SECONDS")
    parser.add_argument("--idle-window", type=cli.seconds(), default=None, metavar="SECONDS")
    parser.add_argument("--json", action="store_true")

    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
