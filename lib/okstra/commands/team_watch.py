"""`team-watch`: argument handling; the work is okstra.team.watchers."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from okstra.core import cli

PROG = "team-watch"


def _run(args: argparse.Namespace) -> int:
    from okstra.model.layout import open_run
    from okstra.team import watchers

    run = open_run(args.run_manifest, project_root=args.project_root)
    if args.feed:
        return _feed(run, tuple(args.worker), once=args.once)
    if args.stop or args.dry_run:
        closed = watchers.stop(run, dry_run=args.dry_run)
        if args.json:
            cli.emit_json(
                {
                    "runId": run.manifest.run_id,
                    "dryRun": args.dry_run,
                    "closed": list(closed.closed),
                    "alreadyGone": list(closed.gone),
                }
            )
        else:
            for pane_id in closed.closed:
                sys.stdout.write(f"{pane_id}\twatcher\n")
        return cli.EXIT_OK
    watcher = watchers.open_watcher(run, tuple(args.worker))
    if args.json:
        cli.emit_json({"runId": run.manifest.run_id, **watcher.to_dict()})
    else:
        sys.stdout.write(f"{watcher.pane_id}\t{watcher.watcher_id}\t{','.join(watcher.workers)}\n")
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    cli.run_options(parser)
    parser.add_argument("--worker", action="append", default=[])
    parser.add_argument("--stop", action="store_true")
    parser.add_argument("--feed", action="store_true")
    parser.add_argument("--once", action="store_true")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--json", action="store_true")

    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))


def _feed(run, workers: tuple[str, ...], *, once: bool) -> int:  # noqa: ANN001 - model.layout.Run
    """The watcher pane's live feed, here: the command asks run.catalog for each provider's
    output format and hands team.watchers the logs (domains never ask each other)."""
    from okstra.run import catalog
    from okstra.team import watchers

    providers = catalog.load(run.root)

    def sources():  # noqa: ANN202
        state = run.state()
        chosen = [state.find(w) for w in workers] if workers else list(state.latest())
        return {
            d.worker_id: (run.resolve(d.log_path, f"{d.worker_id} logPath"), providers.provider(d.provider).output_format)
            for d in chosen
            if d.log_path
        }

    def emit(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    watchers.follow(sources, emit, keep_going=lambda: not once)
    return cli.EXIT_OK
