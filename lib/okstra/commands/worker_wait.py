"""`worker-wait`: block until every selected worker's recorded result is complete (DESIGN §5)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from okstra.commands.worker_probe import add_selection, add_wait_options
from okstra.core import cli
from okstra.model.layout import check_worker_id, open_run

PROG = "worker-wait"


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    add_selection(parser)
    add_wait_options(parser)

    def body() -> int:
        args = parser.parse_args(argv)
        from okstra.team import liveness

        workers = [check_worker_id(w, "--worker") for w in args.worker]
        run = open_run(args.run_manifest, project_root=args.project_root)
        selection = liveness.selection_of(run, workers)
        line = liveness.ProgressLine(PROG)
        try:
            outcome = liveness.wait(
                selection,
                timeout=args.timeout or liveness.DEFAULT_TIMEOUT,
                max_idle=args.max_idle or liveness.DEFAULT_MAX_IDLE,
                launch_grace=args.launch_grace or liveness.DEFAULT_LAUNCH_GRACE,
                progress=line,
            )
        finally:
            line.end()
        if args.json:
            cli.emit_json({"runId": selection.layout.run_id, **outcome.to_dict()})
        else:
            for h in outcome.healths:
                word = "done" if h.done else ("pending" if h.healthy else "unhealthy")
                sys.stdout.write(f"{word}\t{h.worker_id}\t{h.result_path if h.done else h.reason}\n")
            verdict = {0: "all done", 1: "a worker is unhealthy", 3: "timed out"}[outcome.code]
            sys.stdout.write(f"{verdict} after {outcome.waited:.1f} s\n")
        return outcome.code

    return cli.run(PROG, body)
