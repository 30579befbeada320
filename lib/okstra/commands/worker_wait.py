"""`worker-wait`: block until every selected worker's recorded result is complete (DESIGN §5)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from okstra.core import cli
from okstra.model.layout import check_worker_id, open_run

PROG = "worker-wait"


def add_selection(parser: argparse.ArgumentParser) -> None:
    """The options worker-probe and worker-wait share."""
    cli.run_options(parser)
    parser.add_argument("--worker", action="append", default=[])
    parser.add_argument("--max-idle", type=cli.seconds(), default=None)
    parser.add_argument("--launch-grace", type=cli.seconds(), default=None)
    parser.add_argument("--idle-window", type=cli.seconds(), default=None)
    parser.add_argument("--json", action="store_true")


def add_wait_options(parser: argparse.ArgumentParser) -> None:
    """worker-wait's own options (worker-probe --wait takes them too)."""
    parser.add_argument("--timeout", type=cli.seconds(maximum=7 * 86400), default=None)
    # Accepted for the original tool's callers; inotify wakes the wait, not a poll (DESIGN §13).
    parser.add_argument("--interval", type=cli.seconds(), default=None)


class ProgressLine:
    """One live line on a terminal's stderr, rewritten in place; silent elsewhere."""

    def __init__(self, prog: str, stream: Any = None) -> None:
        self.prog = prog
        self.stream = stream or sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = ""

    def __call__(self, healths: list[Any], waited: float) -> None:
        if not self.enabled:
            return
        done = sum(h.done for h in healths)
        bad = sum(not h.healthy for h in healths)
        line = f"{self.prog}: {done} done, {len(healths) - done - bad} pending, {bad} unhealthy, {waited:.0f} s"
        if line != self._last:
            self.stream.write("\r\x1b[2K" + line)
            self.stream.flush()
            self._last = line

    def end(self) -> None:
        if self.enabled and self._last:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()


def _run(args: argparse.Namespace) -> int:
    from okstra.team import liveness

    workers = [check_worker_id(w, "--worker") for w in args.worker]
    run = open_run(args.run_manifest, project_root=args.project_root)
    selection = liveness.selection_of(run, workers)
    line = ProgressLine(PROG)
    try:
        outcome = liveness.wait(
            selection,
            timeout=args.timeout or liveness.DEFAULT_TIMEOUT,
            max_idle=args.max_idle or liveness.DEFAULT_MAX_IDLE,
            launch_grace=args.launch_grace or liveness.DEFAULT_LAUNCH_GRACE,
            idle_window=args.idle_window or liveness.DEFAULT_IDLE_WINDOW,
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
        sys.stdout.write(f"{outcome.verdict} after {outcome.waited:.1f} s\n")
    return {liveness.ALL_DONE: cli.EXIT_OK, liveness.UNHEALTHY: cli.EXIT_NO, liveness.TIMED_OUT: cli.EXIT_DEADLINE}[
        outcome.verdict
    ]


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    add_selection(parser)
    add_wait_options(parser)

    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
