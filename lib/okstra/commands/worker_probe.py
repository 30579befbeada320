"""`worker-probe`: healthy or not, for each selected worker dispatch (DESIGN §5)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okstra.commands.worker_wait import add_selection, add_wait_options
from okstra.core import cli
from okstra.core.errors import UsageError
from okstra.model.layout import check_worker_id, open_run

PROG = "worker-probe"


def _run(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    if args.wait:
        from okstra.commands import worker_wait

        given = sys.argv[1:] if argv is None else argv
        return worker_wait.main([a for a in given if a != "--wait"], cli.doc_for(worker_wait.PROG))
    if args.timeout is not None or args.interval is not None:
        raise UsageError("--timeout and --interval go with --wait", hint="add --wait, or use worker-wait")
    from okstra.team import liveness

    workers = [check_worker_id(w, "--worker") for w in args.worker]
    run = open_run(args.run_manifest, project_root=args.project_root)
    selection = liveness.selection_of(run, workers)
    healths = liveness.probe(
        selection,
        max_idle=args.max_idle or liveness.DEFAULT_MAX_IDLE,
        launch_grace=args.launch_grace or liveness.DEFAULT_LAUNCH_GRACE,
        idle_window=args.idle_window or liveness.DEFAULT_IDLE_WINDOW,
    )
    healthy = all(h.healthy for h in healths)
    if args.json:
        cli.emit_json({"runId": selection.layout.run_id, "healthy": healthy, "workers": [h.to_dict() for h in healths]})
    else:
        for h in healths:
            word = "healthy" if h.healthy else "UNHEALTHY"
            sys.stdout.write(f"{h.worker_id} attempt {h.attempt}: {word}: {h.reason}\n")
        if not healths:
            sys.stdout.write("no dispatch in this run\n")
    return cli.EXIT_OK if healthy else cli.EXIT_NO


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    add_selection(parser)
    parser.add_argument("--wait", action="store_true")
    add_wait_options(parser)

    return cli.run(PROG, lambda: _run(parser.parse_args(argv), argv))
