"""Liveness: assess one dispatch, probe a selection, wait for results (DESIGN §5)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime

import pytest

from conftest import BIN
from fixtures.runs import add_attempt, fakes_env, make_run, set_dispatch
from okstra.core import fsio
from okstra.core.clock import now_iso
from okstra.core.errors import RefusedError
from okstra.model import team_state
from okstra.model.layout import open_run
from okstra.team import inotify, liveness, processes

W = "claude-analyst"


HANG = 60  # seconds: bounds a wait that never ends; never a measured figure


def wait_bounded(sel, **options):
    """liveness.wait with an hour's timeout, so that its own timeout cannot be what ends it
    (at its timeout it still answers from the state it then finds); the test gives up after HANG."""
    outcomes: list[liveness.WaitOutcome] = []
    thread = threading.Thread(target=lambda: outcomes.append(liveness.wait(sel, timeout=3600, **options)), daemon=True)
    thread.start()
    thread.join(HANG)
    assert outcomes, f"the wait did not end within {HANG} s"
    return outcomes[0]


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def me() -> dict:
    return {"pid": os.getpid(), "pid_start_time": processes.start_time(os.getpid())}


def in_progress(layout, started: float, **extra):
    return set_dispatch(
        layout,
        W,
        status="in-progress",
        started_at=iso(started),
        liveness_artifact=layout.relative(layout.heartbeat_path(W)),
        **{**me(), **extra},
    )


def beat(layout, worker=W, attempt=1, at: float | None = None):
    path = layout.heartbeat_path(worker, attempt)
    fsio.write_json(path, {"beatAt": now_iso()})
    if at is not None:
        os.utime(path, (at, at))


def judge(layout, now=None, max_idle=120.0, grace=30.0, worker=W, attempt=None):
    d = team_state.load(layout.team_state).find(worker, attempt)
    return liveness.assess(d, layout, time.time() if now is None else now, max_idle, grace)


def test_a_fresh_heartbeat_and_a_live_process_are_healthy(project):
    layout, _ = make_run(project)
    now = time.time()
    in_progress(layout, now - 5)
    beat(layout, at=now - 1)
    h = judge(layout, now=now)
    assert h.healthy and not h.done and h.pid_alive is True and h.heartbeat_age == pytest.approx(1, abs=0.01)


def test_no_artifact_within_the_launch_grace_is_unhealthy_only_after_the_grace(project):
    layout, _ = make_run(project)
    now = time.time()
    in_progress(layout, now - 10)
    assert judge(layout, now=now, grace=30).healthy
    h = judge(layout, now=now, grace=5)
    assert not h.healthy and "no liveness artifact within the launch grace" in h.reason


def test_an_idle_artifact_is_unhealthy(project):
    layout, _ = make_run(project)
    now = time.time()
    in_progress(layout, now - 300)
    beat(layout, at=now - 200)
    h = judge(layout, now=now, max_idle=120)
    assert not h.healthy and "idle for 200 s" in h.reason
    assert judge(layout, now=now, max_idle=300).healthy


def test_a_redispatched_worker_with_old_files_is_not_instantly_stale(project):
    layout, _ = make_run(project)
    now = time.time()
    # attempt 1 left a heartbeat and log an hour ago; attempt 2 reuses the same artifact path
    beat(layout, at=now - 3600)
    add_attempt(
        layout,
        W,
        status="in-progress",
        started_at=iso(now - 1),
        pid=os.getpid(),
        pid_start_time=processes.start_time(os.getpid()),
        liveness_artifact=layout.relative(layout.heartbeat_path(W)),
    )
    h = judge(layout, now=now, max_idle=120, grace=30)
    assert h.healthy, h.reason
    assert h.heartbeat_age is None  # the old file is not counted as this attempt's artifact
    later = judge(layout, now=now + 31, max_idle=120, grace=30)
    assert not later.healthy and "launch grace" in later.reason


def test_a_pending_dispatch_counts_its_grace_from_dispatched_at(project):
    layout, _ = make_run(project)
    now = time.time()
    assert judge(layout, now=now).healthy  # never dispatched: no clock to count from
    set_dispatch(layout, W, dispatched_at=iso(now - 5), liveness_artifact=layout.relative(layout.heartbeat_path(W)))
    assert judge(layout, now=now, grace=30).healthy
    h = judge(layout, now=now + 60, grace=30)
    assert not h.healthy and "since dispatchedAt" in h.reason


def test_a_dead_process_without_a_terminal_status_is_unhealthy(project):
    layout, _ = make_run(project)
    gone = subprocess.Popen(["true"])
    gone.wait()
    in_progress(layout, time.time(), pid=gone.pid, pid_start_time=None)
    beat(layout)
    h = judge(layout)
    assert not h.healthy and h.pid_alive is False and "without a terminal status" in h.reason


def test_a_reused_pid_is_unhealthy(project):
    layout, _ = make_run(project)
    in_progress(layout, time.time(), pid_start_time="1")
    beat(layout)
    h = judge(layout)
    assert not h.healthy and "reused by another process" in h.reason


def test_completed_needs_its_recorded_result(project):
    layout, _ = make_run(project)
    set_dispatch(layout, W, status="completed", started_at=now_iso(), exit_code=0)
    h = judge(layout)
    assert not h.healthy and "completed without a result" in h.reason
    fsio.atomic_write(layout.result_path(W), "answer\n")
    h = judge(layout)
    assert h.healthy and h.done and h.result_size == 7 and h.result_mtime


@pytest.mark.parametrize("status", ["error", "timeout", "not-run"])
def test_other_terminal_statuses_are_unhealthy(project, status):
    layout, _ = make_run(project)
    set_dispatch(layout, W, status=status, reason="rate-limited")
    h = judge(layout)
    assert not h.healthy and h.reason == f"ended {status}: rate-limited"


def test_health_to_dict_carries_the_evidence(project):
    layout, _ = make_run(project)
    in_progress(layout, time.time())
    beat(layout)
    doc = judge(layout).to_dict()
    assert set(doc["evidence"]) >= {"startedAt", "heartbeatAge", "pid", "pidAlive", "exitCode", "resultSize", "resultMtime"}
    json.dumps(doc)


def test_probe_selects_every_workers_newest_attempt_terminal_ones_included(project):
    layout, _ = make_run(project, ["claude", "codex", "grok"])
    set_dispatch(layout, "codex-analyst", status="error", reason="exit 1: crashed")
    sel = liveness.selection_of(open_run(None), [])
    healths = liveness.probe(sel, max_idle=120, launch_grace=30)
    assert [h.worker_id for h in healths] == ["claude-analyst", "codex-analyst", "grok-analyst"]
    assert [h.healthy for h in healths] == [True, False, True]


def _land(layout, worker, delay):
    time.sleep(delay)
    fsio.atomic_write(layout.result_path(worker), "landed\n")
    set_dispatch(layout, worker, status="completed", finished_at=now_iso(), exit_code=0)


def test_wait_wakes_on_a_landed_result_not_on_its_reassessment_tick(project, monkeypatch):
    # No re-assessment within the hang bound: the wait can end only if watching the folders
    # woke it. How soon is bench_liveness's row.
    monkeypatch.setattr(liveness, "REASSESS_EVERY", 3600.0)
    layout, _ = make_run(project, ["claude", "codex"])
    now = time.time()
    for w in ("claude-analyst", "codex-analyst"):
        set_dispatch(
            layout,
            w,
            status="in-progress",
            started_at=iso(now),
            liveness_artifact=layout.relative(layout.heartbeat_path(w)),
            **me(),
        )
        beat(layout, w)
    fsio.atomic_write(layout.result_path("codex-analyst"), "early\n")
    set_dispatch(layout, "codex-analyst", status="completed")
    sel = liveness.selection_of(open_run(str(layout.manifest)), [])
    lander = threading.Thread(target=_land, args=(layout, "claude-analyst", 0.4))
    lander.start()
    outcome = wait_bounded(sel, max_idle=120, launch_grace=30)
    lander.join()
    assert outcome.verdict == liveness.ALL_DONE
    assert outcome.to_dict()["done"] == ["claude-analyst", "codex-analyst"]


def test_wait_without_inotify_still_notices_a_landed_result(project, monkeypatch):
    monkeypatch.setattr(inotify, "_libc_inotify", lambda: None)
    layout, _ = make_run(project)
    in_progress(layout, time.time())
    beat(layout)
    sel = liveness.selection_of(open_run(str(layout.manifest)), [])
    lander = threading.Thread(target=_land, args=(layout, W, 0.3))
    lander.start()
    # The stat poll's latency is bench_liveness's row.
    outcome = wait_bounded(sel, max_idle=120, launch_grace=30)
    lander.join()
    assert outcome.verdict == liveness.ALL_DONE and outcome.to_dict()["done"] == [W]


def test_wait_times_out_with_3_and_says_who_is_pending(project):
    layout, _ = make_run(project)
    in_progress(layout, time.time())
    beat(layout)
    sel = liveness.selection_of(open_run(str(layout.manifest)), [])
    outcome = liveness.wait(sel, timeout=0.5, max_idle=120, launch_grace=30)
    assert outcome.verdict == liveness.TIMED_OUT
    assert outcome.to_dict()["pending"] == [W] and outcome.to_dict()["timedOut"]


def test_wait_returns_1_when_a_worker_dies(project):
    layout, _ = make_run(project)
    victim = subprocess.Popen(["sleep", "30"])
    in_progress(layout, time.time(), pid=victim.pid, pid_start_time=processes.start_time(victim.pid))
    beat(layout)
    sel = liveness.selection_of(open_run(str(layout.manifest)), [])
    threading.Timer(0.3, lambda: (victim.kill(), victim.wait())).start()
    # Nothing lands in a watched folder: only the re-assessment tick can see the death.
    # How soon is bench_liveness's row.
    outcome = wait_bounded(sel, max_idle=120, launch_grace=30)
    assert outcome.verdict == liveness.UNHEALTHY and outcome.to_dict()["unhealthy"] == [W]


def test_wait_refuses_a_dispatch_without_a_recorded_result_path(project):
    layout, _ = make_run(project)
    set_dispatch(layout, W, result_path=None)
    sel = liveness.selection_of(open_run(str(layout.manifest)), [])
    with pytest.raises(RefusedError, match="no recorded resultPath"):
        liveness.wait(sel, timeout=1, max_idle=120, launch_grace=30)


def test_a_sigkilled_worker_run_is_unhealthy_at_once(project):
    layout, _ = make_run(project)
    proc = subprocess.Popen(
        [sys.executable, str(BIN / "worker-run"), "--run-manifest", str(layout.manifest), "--worker", W],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=fakes_env(OKSTRA_FAKE_MODE="hang"),
    )
    sel = liveness.selection_of(open_run(str(layout.manifest)), [])
    end = time.monotonic() + 15
    while time.monotonic() < end and not layout.heartbeat_path(W).exists():
        time.sleep(0.02)
    child = json.loads(layout.heartbeat_path(W).read_text()).get("childPid")
    while child is None and time.monotonic() < end:
        time.sleep(0.05)
        child = json.loads(layout.heartbeat_path(W).read_text()).get("childPid")
    try:
        assert all(h.healthy for h in liveness.probe(sel, max_idle=120, launch_grace=30))
        proc.kill()
        proc.wait()
        [h] = liveness.probe(sel, max_idle=120, launch_grace=30)
        assert not h.healthy and "gone without a terminal status" in h.reason
    finally:
        if child:  # the orphaned provider: its own group, not killed with worker-run
            os.killpg(child, signal.SIGKILL)


# -- observed failure 5: a hung or throttled provider, seen from its own events ------------


def _run_in_background(layout, worker, **fake):
    proc = subprocess.Popen(
        [sys.executable, str(BIN / "worker-run"), "--run-manifest", str(layout.manifest), "--worker", worker],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=fakes_env(**fake),
    )
    end = time.monotonic() + 15
    while time.monotonic() < end:
        try:
            if json.loads(layout.heartbeat_path(worker).read_text()).get("lastActivityAt"):
                return proc
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("the provider never reported an event")


def _heartbeat(layout, worker):
    return json.loads(layout.heartbeat_path(worker).read_text())


def _heartbeat_after(layout, worker, beat_at):
    end = time.monotonic() + HANG  # bounds a heart that stopped; never a measured figure
    while time.monotonic() < end:
        try:
            later = _heartbeat(layout, worker)
        except (OSError, ValueError):  # read while being replaced
            continue
        if later["beatAt"] != beat_at:
            return later
        time.sleep(0.05)
    raise AssertionError(f"the heartbeat was not rewritten after {beat_at}")


def _stop(proc):
    proc.terminate()
    proc.wait(timeout=15)


def test_observed_5_a_provider_silent_for_the_idle_window_is_stalled_though_its_wrapper_beats(project):
    layout, _ = make_run(project, ["codex"])
    proc = _run_in_background(layout, "codex-analyst", OKSTRA_FAKE_MODE="stall")
    try:
        sel = liveness.selection_of(open_run(str(layout.manifest)), [])
        [h] = liveness.probe(sel, max_idle=120, launch_grace=30, idle_window=60)
        assert h.healthy and h.last_activity_at
        outcome = wait_bounded(sel, max_idle=120, launch_grace=30, idle_window=1)
        [h] = outcome.healths
        assert outcome.verdict == liveness.UNHEALTHY  # how soon: bench_workers' stall row
        assert h.reason.startswith("stalled: no provider event for ") and "idle window 1 s" in h.reason
        # The wrapper's own heart still beats: rewritten while the provider stays silent.
        first = _heartbeat(layout, "codex-analyst")
        later = _heartbeat_after(layout, "codex-analyst", first["beatAt"])
        assert later["lastActivityAt"] == first["lastActivityAt"] < later["beatAt"]
    finally:
        _stop(proc)


@pytest.mark.parametrize("provider,worker", [("antigravity", "antigravity-analyst"), ("codex", "codex-analyst")])
def test_observed_5_a_provider_retrying_a_limit_is_unhealthy_with_its_text(project, provider, worker):
    layout, _ = make_run(project, [provider])
    proc = _run_in_background(layout, worker, OKSTRA_FAKE_MODE="retrying", OKSTRA_FAKE_DELAY="3", OKSTRA_FAKE_RETRIES="10")
    try:
        sel = liveness.selection_of(open_run(str(layout.manifest)), [])
        end = time.monotonic() + 15
        while time.monotonic() < end:
            [h] = liveness.probe(sel, max_idle=120, launch_grace=30, retry_window=5)  # a retry every 3 s
            if not h.healthy:
                break
            time.sleep(0.1)
        assert h.reason.startswith("retrying: "), h.reason
        assert "429" in h.reason and h.to_dict()["evidence"]["lastEvent"].startswith("retry: ")
        assert h.retries >= 2 and h.retrying_for >= 5
    finally:
        _stop(proc)


# What codex 0.171.0 prints on stdout (`exec --json`) when a request fails once and the CLI
# reconnects and carries on (ecosystem.md, second pass; the fake's `reconnect` mode prints
# the same): start events, the metadata warning item, one `Reconnecting... 1/5`, then its turn.
CODEX_START = [
    '{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}',
    '{"type":"turn.started"}',
    '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-5` not found."}}',
]
CODEX_CARRIES_ON = [
    '{"type":"item.completed","item":{"id":"item_1","type":"reasoning","text":"**Reading the prompt**"}}',
    '{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"ls","exit_code":0}}',
    '{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"# Findings"}}',
]


def reconnecting(n: int) -> str:
    return json.dumps({"type": "error", "message": f"Reconnecting... {n}/5 (stream disconnected before completion)"})


class _Replay:
    """A recorded stream fed, line by line, to worker-run's own event reader and heartbeat
    writer: liveness judges exactly the heartbeat worker-run writes for that stream."""

    def __init__(self, project):
        from okstra.run import catalog
        from okstra.team import worker_run

        self.layout, _ = make_run(project, ["codex"])
        self.worker_run = worker_run
        run = open_run(str(self.layout.manifest))
        self.plan = worker_run.prepare(run, catalog.load(run.root), "codex-analyst")
        self.activity = worker_run._Activity(self.plan.output_format)
        in_progress_at = time.time() - 1
        set_dispatch(
            self.layout,
            "codex-analyst",
            status="in-progress",
            started_at=iso(in_progress_at),
            liveness_artifact=self.layout.relative(self.layout.heartbeat_path("codex-analyst")),
            **me(),
        )

    def feed(self, *lines: str) -> None:
        for line in lines:
            self.activity.feed("stdout", line.encode() + b"\n")
        self.worker_run._beat(self.plan, None, 0, self.activity)

    def judge(self, later: float = 0.0, **windows: float):
        d = team_state.load(self.layout.team_state).find("codex-analyst")
        return liveness.assess(d, self.layout, time.time() + later, 120.0, 30.0, **windows)


def test_one_codex_reconnect_then_normal_output_reads_healthy_throughout(project):
    replay = _Replay(project)
    replay.feed(*CODEX_START)
    replay.feed(reconnecting(1))
    # The back-off after one reconnect: the provider's last event is that retry, and it is
    # no state yet (codex carries on after it, DESIGN §5).
    h = replay.judge()
    assert h.healthy, h.reason
    for later in (0.0, 5.0, liveness.DEFAULT_RETRY_WINDOW - 1):
        h = replay.judge(later)
        assert h.healthy, h.reason
        assert h.retries == 1 and h.last_event.startswith("retry: Reconnecting... 1/5")
    replay.feed(*CODEX_CARRIES_ON)
    h = replay.judge(liveness.DEFAULT_RETRY_WINDOW + 5)
    assert h.healthy and h.retries is None and h.retrying_for is None, h.reason
    assert h.to_dict()["evidence"]["retries"] is None


def test_a_retry_that_persists_for_the_retry_window_reads_retrying(project):
    """One reconnect and then nothing but its back-off for the whole window: the CLI is not getting through."""
    replay = _Replay(project)
    replay.feed(*CODEX_START, reconnecting(1))
    h = replay.judge(liveness.DEFAULT_RETRY_WINDOW + 1)
    assert not h.healthy
    assert h.reason.startswith("retrying: Reconnecting... 1/5 (stream disconnected before completion) (1 retry in ")
    assert "retry window 30 s" in h.reason


def test_retries_that_repeat_without_progress_read_retrying_once_the_window_is_reached(project):
    replay = _Replay(project)
    replay.feed(*CODEX_START, reconnecting(1))
    replay.feed("not json: a log line does not end a run of retries", reconnecting(2), reconnecting(3))
    h = replay.judge(later=0.0, retry_window=0.0)
    assert not h.healthy and h.retries == 3 and "3 retries in 0 s" in h.reason, h.reason
    assert replay.judge(later=0.0).healthy  # within the default window: maybe a burst that ends well
    replay.feed(*CODEX_CARRIES_ON)  # it got through: the run of retries is over
    assert replay.judge(later=0.0, retry_window=0.0).healthy


def test_observed_2_codex_reconnecting_once_and_carrying_on_is_waited_for_to_the_end(project):
    """The fake codex in `reconnect` mode (one `Reconnecting... 1/5`, 3 s of back-off, then its
    turn) under worker-run: worker-wait's loop sees it through to done, never unhealthy."""
    layout, _ = make_run(project, ["codex"])
    proc = _run_in_background(layout, "codex-analyst", OKSTRA_FAKE_MODE="reconnect", OKSTRA_FAKE_DELAY="3")
    try:
        sel = liveness.selection_of(open_run(str(layout.manifest)), [])
        seen: list[liveness.Health] = []
        outcome = liveness.wait(sel, timeout=60, max_idle=120, launch_grace=30, progress=lambda hs, _: seen.extend(hs))
        assert outcome.verdict == liveness.ALL_DONE, [h.reason for h in outcome.healths]
        assert any(h.retries == 1 for h in seen), "the reconnect was never seen while waiting"
        assert record_of(layout, "codex-analyst").status == "completed"
    finally:
        proc.wait(timeout=15)


def record_of(layout, worker):
    return team_state.load(layout.team_state).find(worker)
