"""Reclaim and teardown with real workers (fake provider CLIs) in a private tmux server and as processes."""

from __future__ import annotations

import json
import os
import time

import pytest

from conftest import tree_snapshot
from fixtures.runs import FAKES
from fixtures.team import contract, latest, prepare, wait_for
from fixtures.tmux import kill_all, leftovers, private_server, reap
from okstra.core.errors import StateError
from okstra.model import team_state
from okstra.model.dispatch import TORN_DOWN_REASON
from okstra.team import dispatch, lifecycle


@pytest.fixture(autouse=True)
def fakes(monkeypatch):
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("OKSTRA_FAKE_MODE_GROK", "hang")


@pytest.fixture
def server(monkeypatch, tmp_path):
    yield from private_server(monkeypatch, tmp_path)


@pytest.fixture
def no_leftovers(tmp_path):
    yield
    time.sleep(0.1)
    left = leftovers(str(tmp_path))
    kill_all(left)
    assert not left, f"worker processes left running: {left}"


def three_done_grok_running(by):
    return all(by[w].status == "completed" for w in ("claude", "codex", "antigravity")) and by["grok"].status == "in-progress"


def test_reclaim_closes_finished_panes_and_keeps_the_running_one_then_teardown_ends_it(server, project):
    run = prepare(project, lead=server.lead)
    outcome = dispatch.dispatch(run, contract(run))
    panes = {d.worker_id: d.pane_id for d in outcome.dispatched}
    assert len(set(panes.values())) == 4
    by = wait_for(run, three_done_grok_running, what="three completed, grok running")
    # Finished panes remain (dead) until reclaimed: their exit status is still there.
    server.wait_for(lambda: server.panes()[panes["claude"]]["dead"] == "1", what="claude's pane dead, kept")
    assert by["claude"].exit_code == 0

    reclaimed = lifecycle.reclaim(run)
    assert sorted(p for p, _, _ in reclaimed.closed) == sorted(panes[w] for w in ("claude", "codex", "antigravity"))
    assert reclaimed.kept == [(panes["grok"], "grok")]
    rows = server.panes()
    assert panes["grok"] in rows and rows[panes["grok"]]["dead"] == "0"
    assert not any(panes[w] in rows for w in ("claude", "codex", "antigravity"))
    # Reclaim again any time: the running worker still keeps its pane.
    assert lifecycle.reclaim(run).closed == []
    grok_pid = latest(run)["grok"].pid

    down = lifecycle.teardown(run, grace=3)
    assert [p for p, _, _ in down.closed] == [panes["grok"]]
    assert down.written_off == ["grok"] and down.survivors == []
    assert set(server.panes()) == {server.lead}
    assert server.panes()[server.lead]["width"] == "240"
    grok = latest(run)["grok"]
    assert (grok.status, grok.reason) == ("error", TORN_DOWN_REASON)
    assert latest(run)["claude"].status == "completed"
    assert not os.path.exists(f"/proc/{grok_pid}") or open(f"/proc/{grok_pid}/stat").read().split(")")[-1].split()[0] == "Z"
    assert leftovers(str(project)) == []


def test_a_pane_closed_by_hand_records_error_with_the_signal(server, project):
    run = prepare(project, workers=("grok",), lead=server.lead)
    pane = dispatch.dispatch(run, contract(run)).dispatched[0].pane_id
    wait_for(run, lambda by: by["grok"].status == "in-progress", what="grok running")
    server.tmux("kill-pane", "-t", pane)
    grok = wait_for(run, lambda by: by["grok"].terminal, what="grok terminal")["grok"]
    assert grok.status == "error" and grok.reason == "terminated by SIGHUP"
    # worker-run records the status and then exits: give it a bounded moment, not a fixed one.
    assert reap(str(project), timeout=10) == []


def test_a_users_pane_with_the_same_title_survives_reclaim_and_teardown(server, project):
    run = prepare(project, workers=("claude", "grok"), lead=server.lead)
    outcome = dispatch.dispatch(run, contract(run))
    title = server.panes()[outcome.dispatched[0].pane_id]["title"]
    user = server.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", server.lead, "sleep 60").strip()
    server.tmux("select-pane", "-t", user, "-T", title)
    wait_for(run, lambda by: by["claude"].status == "completed" and by["grok"].status == "in-progress")
    lifecycle.reclaim(run)
    lifecycle.teardown(run, grace=3)
    assert set(server.panes()) == {server.lead, user}
    server.tmux("kill-pane", "-t", user)


def test_a_fast_worker_records_its_exit_status_and_keeps_its_pane_until_reclaimed(server, project, monkeypatch):
    monkeypatch.setenv("OKSTRA_FAKE_MODE_CLAUDE", "crash")
    run = prepare(project, workers=("claude",), lead=server.lead)
    pane = dispatch.dispatch(run, contract(run)).dispatched[0].pane_id
    claude = wait_for(run, lambda by: by["claude"].terminal)["claude"]
    assert claude.status == "error" and claude.exit_code == 3
    # The pane stays (dead) until reclaimed; the exit status is the record's, not the screen's.
    server.wait_for(lambda: server.panes()[pane]["dead"] == "1", what="pane dead, kept")
    time.sleep(0.3)
    assert server.panes()[pane]["dead"] == "1"
    assert [p for p, _, _ in lifecycle.reclaim(run).closed] == [pane]


def test_dry_runs_close_nothing_and_write_nothing(server, project):
    run = prepare(project, lead=server.lead)
    dispatch.dispatch(run, contract(run))
    wait_for(run, three_done_grok_running)
    before = (server.panes().keys(), run.team_state_path.read_text())
    assert len(lifecycle.reclaim(run, dry_run=True).closed) == 3
    down = lifecycle.teardown(run, dry_run=True)
    assert len(down.closed) == 4 and down.written_off == ["grok"]
    assert (server.panes().keys(), run.team_state_path.read_text()) == before
    lifecycle.teardown(run, grace=3)


@pytest.mark.parametrize("bad", ["%1; kill-server", "$(touch pwned)", "surface:3", "12"])
def test_a_bad_pane_id_in_the_state_is_refused_and_nothing_changes(server, project, bad):
    run = prepare(project, workers=("claude", "grok"), lead=server.lead)
    outcome = dispatch.dispatch(run, contract(run))
    # grok's worker-run records its child's pid after it marks itself in-progress: wait for
    # that too, so the team state is still while the refusals are checked.
    wait_for(run, lambda by: by["claude"].status == "completed" and by["grok"].status == "in-progress" and by["grok"].child_pid)
    team_state.update_dispatch(run.team_state_path, "claude", 1, lambda d: d.evolve(pane_id=bad))
    state_dir = run.layout.dir  # (the running worker keeps writing its log and heartbeat)
    before_files, before_panes = tree_snapshot(state_dir), set(server.panes())
    for action in (lifecycle.reclaim, lifecycle.teardown):
        with pytest.raises(StateError, match="is not a tmux-pane pane id"):
            action(run)
    after = tree_snapshot(state_dir)
    assert {k: v for k, v in after.items() if not k.startswith("logs/")} == {
        k: v for k, v in before_files.items() if not k.startswith("logs/")
    }
    assert set(server.panes()) == before_panes
    assert not list(project.rglob("pwned"))
    team_state.update_dispatch(run.team_state_path, "claude", 1, lambda d: d.evolve(pane_id=outcome.dispatched[0].pane_id))
    lifecycle.teardown(run, grace=3)


# -- cli-wrapper: the same scenarios as processes ------------------------------------------


def test_cli_wrapper_runs_processes_reclaims_nothing_and_teardown_stops_the_hanging_one(project, no_leftovers):
    run = prepare(project, backend="cli-wrapper")
    outcome = dispatch.dispatch(run, contract(run))
    assert [d.pane_id for d in outcome.dispatched] == [None] * 4 and all(d.pid for d in outcome.dispatched)
    wait_for(run, three_done_grok_running)
    reclaimed = lifecycle.reclaim(run)
    assert reclaimed.closed == [] and reclaimed.kept == []
    assert lifecycle.teardown(run, dry_run=True).closed == []
    grok_pid = latest(run)["grok"].pid
    down = lifecycle.teardown(run, grace=3)
    assert down.closed == [] and down.written_off == ["grok"] and grok_pid in down.stopped and down.survivors == []
    grok = latest(run)["grok"]
    assert (grok.status, grok.reason) == ("error", TORN_DOWN_REASON)
    assert leftovers(str(project)) == []
    # The dispatch log got the worker's output; the answer went to the recorded result path.
    claude = latest(run)["claude"]
    assert (project / claude.result_path).read_text().strip()


def test_teardown_never_signals_a_reused_pid(project, no_leftovers):
    import subprocess
    import sys

    run = prepare(project, workers=("claude",), backend="cli-wrapper")
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
    try:
        team_state.update_dispatch(
            run.team_state_path,
            "claude",
            1,
            lambda d: d.evolve(status="in-progress", pid=bystander.pid, pgid=bystander.pid, pid_start_time="1"),
        )
        down = lifecycle.teardown(run, grace=0.5)
        assert down.stopped == [] and bystander.poll() is None
        assert latest(run)["claude"].reason == TORN_DOWN_REASON
    finally:
        bystander.kill()
        bystander.wait()


def test_teardown_json_shape(project, no_leftovers):
    run = prepare(project, workers=("claude",), backend="cli-wrapper")
    doc = lifecycle.teardown(run).to_dict()
    assert json.loads(json.dumps(doc))["panes"] == 0 and doc["writtenOff"] == ["claude"]


def test_teardown_stops_the_provider_orphaned_by_a_sigkilled_worker_run(project, no_leftovers):
    import signal

    from okstra.team import processes

    run = prepare(project, workers=("grok",), backend="cli-wrapper")
    dispatch.dispatch(run, contract(run))
    grok = wait_for(run, lambda by: by["grok"].child_pid is not None, what="grok's provider child")["grok"]
    os.kill(grok.pid, signal.SIGKILL)  # worker-run dies without a word; its provider child lives on
    deadline = time.monotonic() + 5
    while processes.matches(grok.pid, grok.pid_start_time) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes.matches(grok.child_pid, grok.child_start_time), "the orphaned provider should still run"
    down = lifecycle.teardown(run, grace=2)
    assert grok.child_pid in down.stopped and down.survivors == []
    assert not processes.matches(grok.child_pid, grok.child_start_time)
    assert (latest(run)["grok"].status, latest(run)["grok"].reason) == ("error", TORN_DOWN_REASON)


def test_teardown_ends_the_run_and_keeps_its_final_status(project):
    run = prepare(project, workers=("claude",), backend="cli-wrapper")
    down = lifecycle.teardown(run, grace=1)
    assert (down.run_ended, down.final_status) == (True, None)
    assert not (project / ".okstra" / "active-run.json").exists()
    manifest = json.loads(run.manifest_path.read_text())
    assert manifest["activeRunContext"]["phase"] == "ended" and manifest["finalStatus"] is None


def test_abandon_records_abandoned_and_writes_off_what_is_left(project):
    run = prepare(project, workers=("claude", "codex"), backend="cli-wrapper")
    out = lifecycle.abandon(run, grace=1)
    assert (out.action, out.final_status, out.run_ended) == ("run-end", "abandoned", True)
    assert sorted(out.written_off) == ["claude", "codex"]
    assert json.loads(run.manifest_path.read_text())["finalStatus"] == "abandoned"
    assert {d.status for d in latest(run).values()} == {"error"}


def test_a_failed_width_restore_after_the_kills_still_reports_the_closed_panes(server, project):
    run = prepare(project, workers=("claude", "codex"), lead=server.lead, backend="tmux-pane")
    panes = sorted(d.pane_id for d in dispatch.dispatch(run, contract(run)).dispatched)
    wait_for(run, lambda by: all(d.status == "completed" for d in by.values()), what="both completed")
    server.tmux("set-option", "-p", "-t", server.lead, "@okstra-lead-width", "99999999999")
    out = lifecycle.reclaim(run)
    assert sorted(p for p, _, _ in out.closed) == panes
    assert len(out.warnings) == 1 and "too large" in out.warnings[0]
    assert set(server.panes()) == {server.lead}
