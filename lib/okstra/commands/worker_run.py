"""`worker-run`: run one dispatch's provider CLI to a terminal status (DESIGN §5)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from okstra.core import cli
from okstra.run.layout import check_worker_id

PROG = "worker-run"


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise ValueError(text)
    return int(text)


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("--run-manifest", required=True, type=Path)
    parser.add_argument("--worker", required=True)
    parser.add_argument("--attempt", type=_positive_int)

    def body() -> int:
        args = parser.parse_args(argv)
        from okstra.team import worker_run

        worker = check_worker_id(args.worker, "--worker")
        return worker_run.run(args.run_manifest, worker, args.attempt, echo=worker_run.main_echo())

    return cli.run(PROG, body)
