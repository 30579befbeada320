"""`worker-run`: run one dispatch's provider CLI to a terminal status (DESIGN §5).

okstra's modules are imported inside the functions: a worker-run that team-dispatch
started waits at the launch gate (core.gate) before it loads anything, so sixteen of
them do not take the CPU from the command that started them.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from okstra.core import gate

if TYPE_CHECKING:
    import argparse

    from okstra.model.layout import Run

PROG = "worker-run"


def _scope_begin(run: Run, worker: str, attempt: int | None):
    """stage-check's snapshot before the provider starts, taken once worker-run has passed
    every check that can refuse (its `at_start`), so a refused worker-run writes nothing
    (DESIGN §14); a failure here never stops the worker, it is only noted on the dispatch."""
    from okstra.commands import stage_check
    from okstra.core.errors import OkstraError

    try:
        return stage_check.begin_worker(run, worker, attempt)
    except OkstraError as exc:
        return exc.message


def _scope_end(scope, worker: str, attempt: int | None) -> dict:
    """The scope verdict at the end of the dispatch, for its terminal record (DESIGN §10)."""
    from okstra.commands import stage_check
    from okstra.core import cli
    from okstra.core.errors import OkstraError
    from okstra.model.dispatch import ScopeCheck

    if scope is None:
        return {}
    if isinstance(scope, str):
        return {"scope_check": ScopeCheck("not-checked", note=scope)}
    try:
        check, verdict = stage_check.end_worker(scope)
    except OkstraError as exc:
        cli.say(PROG, f"{worker}: scope not checked: {exc}")
        return {"scope_check": ScopeCheck("not-checked", note=exc.message)}
    if verdict is not None and not verdict.ok:
        shown = ", ".join(p.change.path for p in verdict.out_of_scope[:5])
        cli.say(PROG, f"{worker}: {len(verdict.out_of_scope)} path(s) out of scope: {shown} (stage-check lists them)")
    return {"scope_check": check}


def _run(args: argparse.Namespace) -> int:
    import signal

    from okstra.core import cli
    from okstra.model.dispatch import COMPLETED
    from okstra.model.layout import check_worker_id, open_run
    from okstra.run import catalog
    from okstra.team import worker_run

    worker = check_worker_id(args.worker, "--worker")
    attempt = cli.positive_int(args.attempt, "--attempt") if args.attempt is not None else None
    run = open_run(args.run_manifest, project_root=args.project_root)
    scope = []  # the snapshot, once worker-run may no longer refuse
    done = worker_run.run(
        run,
        catalog.load(run.root),  # heavy (YAML, schema): only when a worker really runs
        worker,
        attempt,
        echo=getattr(sys.stdout, "buffer", None),  # a pane shows the output as it arrives
        at_start=lambda: scope.append(_scope_begin(run, worker, attempt)),
        at_end=lambda: _scope_end(scope[0] if scope else None, worker, attempt),
    )
    if done.signal is not None:
        cli.say(PROG, f"{done.worker_id}: terminated by {signal.Signals(done.signal).name}")
        return cli.signalled(done.signal)
    if done.status == COMPLETED:
        cli.say(PROG, f"{done.worker_id}: completed -> {done.result} ({done.result_source})")
        return cli.EXIT_OK
    cli.say(PROG, f"{done.worker_id}: error: {done.reason}")
    return cli.EXIT_NO


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    gate.pass_through()  # started by team-dispatch: begin once it has returned (core.gate)
    from okstra.core import cli

    parser = cli.parser(PROG, doc)
    cli.run_options(parser, manifest_required=True)
    parser.add_argument("--worker", required=True)
    parser.add_argument("--attempt")

    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
