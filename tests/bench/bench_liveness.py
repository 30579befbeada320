"""worker-wait rows (DESIGN §13): detection latency of a landed result, CPU while waiting on 32 workers.

Both run the installed `worker-wait` against a run prepared with the test
fixture. A worker is "in flight" with a fresh heartbeat and a live pid (a
`sleep` process with its recorded start time). A landing is what worker-run
does: the result file written atomically, then the record set completed;
latency is timed from the moment the landing is complete (the record says
completed) to worker-wait's exit; the landing's own duration (two fsyncs) is
printed in the note.

Two rows call `liveness.wait` (what worker-wait runs) in this process, where a
wait's first assessment is known (its progress callback) and inotify can be
switched off: a landing noticed by the stat poll, and a worker's death noticed
by the re-assessment tick. Each is a ratio to the interval that bounds it by
design (one poll or one tick) plus one assessment, measured in the same run.
The unit tests only check that these waits end with the right verdict.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bench.run import Context, Row
from fixtures.runs import make_run, set_dispatch
from okstra.core import fsio
from okstra.model.layout import open_run
from okstra.team import inotify, liveness, processes

LANDINGS = 20
WORKERS = 32
CPU_WINDOW = 10.0
IN_PROCESS = 9  # waits per in-process row (the median is taken)


def _iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _project(ctx: Context, name: str) -> Path:
    root = ctx.tmp / name
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root.resolve()


def _in_flight(layout, workers: list[str], pid: int) -> None:
    start = processes.start_time(pid)
    for w in workers:
        fsio.write_json(layout.heartbeat_path(w), {"beatAt": _iso()})
        set_dispatch(
            layout,
            w,
            status="in-progress",
            started_at=_iso(),
            pid=pid,
            pid_start_time=start,
            liveness_artifact=layout.relative(layout.heartbeat_path(w)),
        )


def _watching(pid: int, timeout: float = 10.0) -> None:
    """Return once the process holds an inotify descriptor (it is waiting), or fail."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            links = []
        if not links and not os.path.exists(f"/proc/{pid}"):
            raise RuntimeError(f"worker-wait exited before it watched (pid {pid})")
        if "anon_inode:inotify" in links:
            time.sleep(0.05)  # past the first assessment, into select()
            return
        time.sleep(0.005)
    raise RuntimeError("worker-wait never started watching")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _latency(ctx: Context, keeper: subprocess.Popen) -> float:
    root = _project(ctx, "bench-wait-latency")
    workers = [f"w{i:02d}" for i in range(LANDINGS)]
    layout, _ = make_run(root, [{"workerId": w, "provider": "claude"} for w in workers])
    _in_flight(layout, workers, keeper.pid)
    wait_bin = ctx.prefix / "bin" / "worker-wait"
    times: list[float] = []
    writes: list[float] = []
    for w in workers:
        proc = subprocess.Popen(
            [str(wait_bin), "--run-manifest", str(layout.manifest), "--worker", w, "--timeout", "60"],
            cwd=root,  # a run manifest is taken only inside the project the command works in
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _watching(proc.pid)
        t_write = time.perf_counter()
        fsio.atomic_write(layout.result_path(w), "# Findings\n\nlanded\n")
        set_dispatch(layout, w, status="completed", finished_at=_iso(), exit_code=0)
        t0 = time.perf_counter()  # landed: the result is written and the record says completed
        code = proc.wait(timeout=60)
        times.append(time.perf_counter() - t0)
        writes.append(t0 - t_write)
        if code != 0:
            raise RuntimeError(f"worker-wait exited {code} for {w}")
    return statistics.median(times), statistics.median(writes)


def _cpu(ctx: Context, keeper: subprocess.Popen) -> float:
    root = _project(ctx, "bench-wait-cpu")
    workers = [f"w{i:02d}" for i in range(WORKERS)]
    layout, _ = make_run(root, [{"workerId": w, "provider": "codex"} for w in workers])
    _in_flight(layout, workers, keeper.pid)
    proc = subprocess.Popen(
        [str(ctx.prefix / "bin" / "worker-wait"), "--run-manifest", str(layout.manifest), "--timeout", "120"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _watching(proc.pid)
        before, t0 = _cpu_seconds(proc.pid), time.monotonic()
        time.sleep(CPU_WINDOW)
        used, elapsed = _cpu_seconds(proc.pid) - before, time.monotonic() - t0
        if proc.poll() is not None:
            raise RuntimeError(f"worker-wait stopped waiting early (exit {proc.returncode})")
    finally:
        proc.kill()
        proc.wait()
    return 100.0 * used / elapsed


def _timed_wait(layout, root: Path, worker: str, end_it: Callable[[], None], after: float = 0.05) -> tuple[float, float]:
    """(seconds from `end_it()` returning to liveness.wait on `worker` returning, seconds of one
    assessment); `end_it` runs `after` seconds past the wait's first assessment, in its sleep."""
    selection = liveness.selection_of(open_run(str(layout.manifest), project_root=root, cwd=root), [worker])
    t_probe = time.perf_counter()
    liveness.probe(selection, max_idle=120, launch_grace=30)
    probe = time.perf_counter() - t_probe
    assessed = threading.Event()
    ended: list[float] = []

    def run() -> None:
        liveness.wait(selection, timeout=60, max_idle=120, launch_grace=30, progress=lambda *_: assessed.set())
        ended.append(time.perf_counter())

    waiter = threading.Thread(target=run)
    waiter.start()
    if not assessed.wait(30):
        raise RuntimeError("liveness.wait never made its first assessment")
    time.sleep(after)
    end_it()
    t0 = time.perf_counter()
    waiter.join(60)
    if not ended:
        raise RuntimeError("liveness.wait did not end")
    return ended[0] - t0, probe


def _stat_poll(ctx: Context, keeper: subprocess.Popen) -> tuple[float, float]:
    """A landing noticed without inotify: median latency and median assessment (landings at
    evenly spread points of the poll interval)."""
    root = _project(ctx, "bench-wait-stat-poll")
    workers = [f"w{i:02d}" for i in range(IN_PROCESS)]
    layout, _ = make_run(root, [{"workerId": w, "provider": "claude"} for w in workers])
    _in_flight(layout, workers, keeper.pid)
    found = []
    real = inotify._libc_inotify
    inotify._libc_inotify = lambda: None  # as on a libc without inotify
    try:
        for i, w in enumerate(workers):

            def land(w: str = w) -> None:
                fsio.atomic_write(layout.result_path(w), "# Findings\n\nlanded\n")
                set_dispatch(layout, w, status="completed", finished_at=_iso(), exit_code=0)

            after = 0.05 + (i + 0.5) / IN_PROCESS * inotify.FALLBACK_POLL
            found.append(_timed_wait(layout, root, w, land, after))
    finally:
        inotify._libc_inotify = real
    return statistics.median(f[0] for f in found), statistics.median(f[1] for f in found)


def _death(ctx: Context) -> tuple[float, float]:
    """A worker's death noticed (nothing lands in a watched folder): median latency and assessment.
    The deaths fall at evenly spread points of the tick, so the median is not one phase's figure."""
    found = []
    for i in range(IN_PROCESS):
        after = (i + 0.5) / IN_PROCESS * liveness.REASSESS_EVERY
        root = _project(ctx, f"bench-wait-death-{i}")
        layout, _ = make_run(root, [{"workerId": "w00", "provider": "claude"}])
        victim = subprocess.Popen(["sleep", "600"])
        try:
            _in_flight(layout, ["w00"], victim.pid)
            found.append(_timed_wait(layout, root, "w00", lambda victim=victim: (victim.kill(), victim.wait()), after))
        finally:
            victim.kill()
            victim.wait()
    return statistics.median(f[0] for f in found), statistics.median(f[1] for f in found)


def rows(ctx: Context) -> list[Row]:
    keeper = subprocess.Popen(["sleep", "600"])  # the live "worker" pid every record points at
    try:
        latency, landing = _latency(ctx, keeper)
        cpu = _cpu(ctx, keeper)
        polled, poll_probe = _stat_poll(ctx, keeper)
    finally:
        keeper.kill()
        keeper.wait()
    died, death_probe = _death(ctx)
    return [
        Row(
            f"worker-wait: result landing to exit (median of {LANDINGS})",
            latency,
            "s",
            "20 s polling (expected wait)",
            10.0,
            "<= 0.01",
            f"timed from the landed record; the landing itself (result + record, 2 fsyncs) took {landing * 1000:.0f} ms more; "
            f"load average {os.getloadavg()[0]:.1f}",
        ),
        Row(
            f"worker-wait: CPU while waiting on {WORKERS} workers ({CPU_WINDOW:g} s)", cpu, "%", "1 % of one core", 1.0, "<= 1.0"
        ),
        Row(
            f"liveness.wait without inotify: result landing to return (median of {IN_PROCESS})",
            polled,
            "s",
            "one stat poll + one assessment",
            inotify.FALLBACK_POLL + poll_probe,
            "<= 1.0",
        ),
        Row(
            f"liveness.wait: a worker's death to return (median of {IN_PROCESS})",
            died,
            "s",
            "one re-assessment tick + one assessment",
            liveness.REASSESS_EVERY + death_probe,
            "<= 1.0",
        ),
    ]
