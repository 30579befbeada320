"""Core rows: interpreter start-up (the hook baseline) and locked JSON updates/s."""

from __future__ import annotations

import json
import multiprocessing
import statistics
import sys
import time
from pathlib import Path

from bench.run import Context, Row

TRIALS = 3
WRITERS = 16
UPDATES = 200


def _writer(path: str, n: int, ready, go) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
    from okstra.core import fsio

    ready.release()
    go.wait()

    def bump(doc: dict) -> bool:
        doc["count"] += 1
        return True

    for _ in range(n):
        fsio.update_json(Path(path), bump)


def _trial(state: Path) -> tuple[float, int]:
    """One round of WRITERS processes x UPDATES locked updates: (updates/s, updates lost)."""
    state.write_text(json.dumps({"count": 0}))
    ready, go = multiprocessing.Semaphore(0), multiprocessing.Event()
    procs = [multiprocessing.Process(target=_writer, args=(str(state), UPDATES, ready, go)) for _ in range(WRITERS)]
    for p in procs:
        p.start()
    for _ in procs:
        ready.acquire()
    # Timed from the moment every writer is loaded and waiting: start-up is not an update.
    t0 = time.perf_counter()
    go.set()
    for p in procs:
        p.join()
    elapsed = time.perf_counter() - t0
    final = json.loads(state.read_text())["count"]
    return (WRITERS * UPDATES) / elapsed, WRITERS * UPDATES - final


def rows(ctx: Context) -> list[Row]:
    startup = ctx.startup()
    # The median of three rounds: one round's rate swings with the disk's fsync latency.
    trials = [_trial(ctx.tmp / f"bench-state-{n}.json") for n in range(TRIALS)]
    rate = statistics.median(rate for rate, _ in trials)
    lost = sum(lost for _, lost in trials)
    return [
        Row(
            "interpreter start-up (installed venv, python -c pass)",
            startup,
            "s",
            "itself",
            startup,
            "<= 1.0",
            "the baseline of the write-guard rows",
        ),
        Row(
            f"locked JSON updates/s ({WRITERS} writers x {UPDATES}, median of {TRIALS})",
            rate,
            "updates/s",
            "budget",
            1000.0,
            ">= 1.0",
            f"lost updates: {lost} (must be 0)" if lost == 0 else f"LOST {lost} UPDATES",
        ),
        Row("locked JSON lost updates", float(lost), "", "none lost", 1.0, "<= 0.0"),
    ]
