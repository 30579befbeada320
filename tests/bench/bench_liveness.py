"""worker-wait rows (DESIGN §13): detection latency of a landed result, CPU while waiting on 32 workers.

Both run the installed `worker-wait` against a run prepared with the test
fixture. A worker is "in flight" with a fresh heartbeat and a live pid (a
`sleep` process with its recorded start time). A landing is what worker-run
does: the result file written atomically, then the record set completed;
latency is timed from the moment the landing is complete (the record says
completed) to worker-wait's exit; the landing's own duration (two fsyncs) is
printed in the note.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.run import Context, Row
from fixtures.runs import make_run, set_dispatch
from okstra.core import fsio
from okstra.team import processes

LANDINGS = 20
WORKERS = 32
CPU_WINDOW = 10.0


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


def rows(ctx: Context) -> list[Row]:
    keeper = subprocess.Popen(["sleep", "600"])  # the live "worker" pid every record points at
    try:
        latency, landing = _latency(ctx, keeper)
        cpu = _cpu(ctx, keeper)
    finally:
        keeper.kill()
        keeper.wait()
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
    ]
