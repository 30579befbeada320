"""`team-dispatch`: argument handling; the work is okstra.team.dispatch."""

from __future__ import annotations

from collections.abc import Sequence

from okstra.core import cli

PROG = "team-dispatch"


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    cli.run_options(parser)
    parser.add_argument("--round", metavar="NAME")
    parser.add_argument("--worker", action="append", default=[], metavar="ID")
    parser.add_argument("--redispatch", action="append", default=[], metavar="ID")
    parser.add_argument("--json", action="store_true")

    def body() -> int:
        args = parser.parse_args(argv)
        from okstra.model.layout import open_run
        from okstra.team import dispatch

        run = open_run(args.run_manifest, project_root=args.project_root)
        outcome = dispatch.dispatch(run, round_name=args.round, workers=args.worker, redispatch=args.redispatch)
        if args.json:
            cli.emit_json(outcome.to_dict())
        else:
            for d in outcome.dispatched:
                print(f"{d.worker_id}\t{d.attempt}\t{d.pane_id or '-'}\t{d.pid or '-'}")
        panes = sum(1 for d in outcome.dispatched if d.pane_id)
        cli.say(PROG, f"PROGRESS: phase-dispatch workers={len(outcome.dispatched)} panes={panes} backend={outcome.backend}")
        return cli.EXIT_OK

    return cli.run(PROG, body)
