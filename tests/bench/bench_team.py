"""Team rows (DESIGN §13): team-teardown of 32 real tmux panes, team-dispatch of 16 workers.

Both run the installed commands against a private tmux server (`tmux -S`).
- teardown: 32 worker panes (each running `sleep`, recorded in-progress with
  pid and start time, so teardown also writes them off and checks the
  processes are gone); figure = wall time of `team-teardown`, compared with
  the 0.5 s budget; the note gives the naive baseline, 32 separate
  `tmux kill-pane` calls, on the same kind of panes.
- dispatch: 16 pending dispatches with prompts from the real prompt renderer
  (so the prompt check runs for real); figure = wall time of `team-dispatch`
  until it returns, compared with the 1 s budget.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.run import REPO, Context, Row

PANES = 32
WORKERS = 16
RUNS = 5


def _server() -> tuple[str, str, str]:
    folder = tempfile.mkdtemp(prefix="okb-", dir="/tmp")
    sock = os.path.join(folder, "sock")
    subprocess.run(["tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-x", "240", "-y", "100"], check=True)
    lead = subprocess.run(
        ["tmux", "-S", sock, "display-message", "-p", "#{pane_id}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return folder, sock, lead


def _kill(folder: str, sock: str) -> None:
    subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True, check=False)
    subprocess.run(["rm", "-rf", folder], check=False)


def _env(ctx: Context, sock: str, lead: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OKSTRA_", "TMUX"))}
    env.update(
        OKSTRA_TMUX_SOCKET=sock,
        TMUX_PANE=lead,
        OKSTRA_ROOT=str(ctx.tmp / "okstra-root"),
        PATH=f"{REPO / 'tests' / 'fakes'}{os.pathsep}{env.get('PATH', '')}",
        OKSTRA_FAKE_MODE="hang",
    )
    return env


def _project(ctx: Context, name: str) -> Path:
    root = ctx.tmp / name
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _teardown_once(ctx: Context, n: int) -> float:
    from fixtures.runs import make_run
    from okstra.core import fsio
    from okstra.model import team_state
    from okstra.team import processes
    from okstra.team.backends.base import LaunchSpec
    from okstra.team.backends.tmux import TmuxBackend

    folder, sock, lead = _server()
    try:
        root = _project(ctx, f"teardown-{n}")
        workers = [{"provider": "claude", "workerId": f"w{i:02d}"} for i in range(PANES)]
        layout, manifest = make_run(root, workers, backend="tmux-pane")
        fsio.write_json(layout.manifest, manifest.evolve(lead_pane_id=lead).to_dict())
        os.environ["OKSTRA_TMUX_SOCKET"] = sock
        backend = TmuxBackend(run_id=manifest.run_id, project_root=root, lead_pane_id=lead, env={})
        specs = [LaunchSpec(f"w{i:02d}", 1, ("sleep", "600"), f"okstra w{i:02d}", root / "log", root) for i in range(PANES)]
        launched = {x.spec.worker_id: x for x in backend.launch(specs)}

        def record(state):
            return type(state)(
                state.run_id,
                tuple(
                    d.evolve(
                        status="in-progress",
                        pane_id=launched[d.worker_id].pane_id,
                        pid=launched[d.worker_id].pid,
                        pgid=launched[d.worker_id].pid,
                        pid_start_time=processes.start_time(launched[d.worker_id].pid),
                        started_at="2026-11-30T12:00:00Z",
                    )
                    for d in state.dispatches
                ),
            )

        team_state.update(layout.team_state, record)
        t0 = time.perf_counter()
        done = subprocess.run(
            [str(ctx.prefix / "bin" / "team-teardown"), "--run-manifest", str(layout.manifest), "--json"],
            env=_env(ctx, sock, lead),
            cwd=root,  # a run manifest is taken only inside the project the command works in
            capture_output=True,
            text=True,
            check=False,
        )
        elapsed = time.perf_counter() - t0
        if done.returncode != 0 or f'"panes": {PANES}' not in done.stdout:
            raise SystemExit(f"bench_team: team-teardown failed: {done.stderr.strip()}")
        left = subprocess.run(["tmux", "-S", sock, "list-panes", "-a"], capture_output=True, text=True).stdout.splitlines()
        if len(left) != 1:
            raise SystemExit(f"bench_team: team-teardown left {len(left) - 1} panes")
        return elapsed
    finally:
        _kill(folder, sock)


def _kill_pane_baseline() -> float:
    folder, sock, lead = _server()
    try:
        ids = []
        for _ in range(PANES):
            ids.append(
                subprocess.run(
                    ["tmux", "-S", sock, "split-window", "-d", "-P", "-F", "#{pane_id}", "-t", lead, "-l", "1", "sleep 600"],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.strip()
            )
            subprocess.run(["tmux", "-S", sock, "select-layout", "-t", lead, "tiled"], check=True)
        t0 = time.perf_counter()
        for pane in ids:
            subprocess.run(["tmux", "-S", sock, "kill-pane", "-t", pane], check=True)
        return time.perf_counter() - t0
    finally:
        _kill(folder, sock)


def _dispatch_once(ctx: Context, n: int) -> float:
    from okstra.core import fsio
    from okstra.model import team_state
    from okstra.model.dispatch import Dispatch
    from okstra.model.layout import RunLayout
    from okstra.model.team_state import TeamState
    from okstra.run import catalog, prompts
    from okstra.run.bundle import BundleRequest, render

    folder, sock, lead = _server()
    env = _env(ctx, sock, lead)
    try:
        root = _project(ctx, f"dispatch-{n}")
        old = dict(os.environ)
        os.environ.update(OKSTRA_ROOT=env["OKSTRA_ROOT"])
        try:
            result = render(
                root,
                BundleRequest(
                    brief="a test task",
                    task_key="bench/dispatch",
                    task_type="analysis",
                    workers=["claude", "codex", "antigravity", "grok", "kimi"],
                    backend="tmux-pane",
                    lead_pane=lead,
                ),
            )
        finally:
            os.environ.clear()
            os.environ.update(old)
        run = result.manifest
        layout = RunLayout(root, run.run_id)
        cat = catalog.load(root)
        base = result.team_state.dispatches
        extra = []
        for i in range(WORKERS - len(base)):
            b = base[i % len(base)]
            wid = f"{b.worker_id}-x{i}"
            d = Dispatch(
                worker_id=wid,
                role=b.role,
                provider=b.provider,
                model_id=b.model_id,
                round=b.round,
                prompt_path=layout.relative(layout.prompt_path(wid)),
                result_path=layout.relative(layout.result_path(wid)),
                log_path=layout.relative(layout.log_path(wid)),
                liveness_artifact=layout.relative(layout.heartbeat_path(wid)),
            )
            fsio.atomic_write(layout.prompt_path(wid), prompts.render(run, d, cat, brief="bench", run_layout=layout))
            extra.append(d)
        team_state.update(layout.team_state, lambda s: TeamState(s.run_id, s.dispatches + tuple(extra)))
        # The extra workers join the manifest's roster (assignments, participants) like the first five.
        from dataclasses import replace

        assign = {a.worker_id: a for a in run.assignments}
        people = {x.worker_id: x for x in run.participants}
        grown = run.evolve(
            assignments=run.assignments
            + tuple(replace(assign[d.worker_id.rsplit("-x", 1)[0]], worker_id=d.worker_id) for d in extra),
            participants=run.participants
            + tuple(replace(people[d.worker_id.rsplit("-x", 1)[0]], worker_id=d.worker_id) for d in extra),
        )
        fsio.write_json(layout.manifest, grown.to_dict())
        t0 = time.perf_counter()
        done = subprocess.run(
            [str(ctx.prefix / "bin" / "team-dispatch"), "--run-manifest", str(layout.manifest), "--json"],
            env=env,
            cwd=root,  # a run manifest is taken only inside the project the command works in
            capture_output=True,
            text=True,
            check=False,
        )
        elapsed = time.perf_counter() - t0
        if done.returncode != 0 or f'"panes": {WORKERS}' not in done.stdout:
            raise SystemExit(f"bench_team: team-dispatch failed: {done.stderr.strip()}")
        subprocess.run(
            [str(ctx.prefix / "bin" / "team-teardown"), "--run-manifest", str(layout.manifest), "--grace", "3"],
            env=env,
            cwd=root,  # a run manifest is taken only inside the project the command works in
            capture_output=True,
            check=False,
        )
        return elapsed
    finally:
        _kill(folder, sock)


def rows(ctx: Context) -> list[Row]:
    sys.path.insert(0, str(REPO / "tests"))
    saved = os.environ.get("OKSTRA_TMUX_SOCKET")
    try:
        teardown = statistics.median(_teardown_once(ctx, i) for i in range(RUNS))
        naive = statistics.median(_kill_pane_baseline() for _ in range(3))
        dispatch = statistics.median(_dispatch_once(ctx, i) for i in range(3))
    finally:
        if saved is None:
            os.environ.pop("OKSTRA_TMUX_SOCKET", None)
        else:
            os.environ["OKSTRA_TMUX_SOCKET"] = saved
    return [
        Row(
            f"team-teardown of {PANES} real tmux panes (median of {RUNS})",
            teardown,
            "s",
            "budget",
            0.5,
            "<= 1.0",
            f"naive baseline, {PANES} separate tmux kill-pane calls: {naive * 1000:.1f} ms "
            f"(teardown = {teardown / naive:.2f} x that, including interpreter start-up, state write-off and process checks)",
        ),
        Row(
            f"team-dispatch of {WORKERS} workers into tmux panes (median of 3)",
            dispatch,
            "s",
            "budget",
            1.0,
            "<= 1.0",
            "includes the prompt check of all 16 prompts; returns without waiting for the workers",
        ),
    ]
