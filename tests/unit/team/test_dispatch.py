"""team-dispatch: prompt check first, batch launch, pane ids recorded, re-dispatch as a fresh attempt."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import tree_snapshot
from fixtures.runs import FAKES
from fixtures.team import contract, latest, prepare, wait_for
from fixtures.tmux import private_server, reap
from okstra.commands import team_dispatch
from okstra.core.errors import ProblemsFound, RefusedError, StateError
from okstra.model import team_state
from okstra.team import dispatch, lifecycle


@pytest.fixture(autouse=True)
def fakes(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ['PATH']}")
    yield
    left = reap(str(tmp_path))
    assert not left


@pytest.fixture
def server(monkeypatch, tmp_path):
    yield from private_server(monkeypatch, tmp_path)


def test_dispatch_records_pane_ids_and_returns_at_once(server, project, monkeypatch):
    monkeypatch.setenv("OKSTRA_FAKE_MODE", "slow")
    monkeypatch.setenv("OKSTRA_FAKE_DELAY", "5")
    run = prepare(project, lead=server.lead)
    outcome = dispatch.dispatch(run, contract(run))
    by = latest(run)
    # Returned without waiting for the workers (each takes 5 s): none has finished yet.
    assert not any(d.terminal for d in by.values())
    assert {w: by[w].pane_id for w in by} == {d.worker_id: d.pane_id for d in outcome.dispatched}
    assert all(d.dispatched_at and d.pid for d in by.values())
    rows = server.panes()
    assert {rows[d.pane_id]["worker"] for d in outcome.dispatched} == set(by)
    wait_for(run, lambda b: all(d.status == "completed" for d in b.values()))
    # Nothing pending any more: a second dispatch starts nothing.
    assert dispatch.dispatch(run, contract(run)).dispatched == []
    lifecycle.teardown(run)


def test_a_failing_prompt_refuses_the_whole_round(server, project):
    run = prepare(project, workers=("claude", "codex"), lead=server.lead)
    prompt = project / latest(run)["codex"].prompt_path
    prompt.write_text(prompt.read_text().replace("**Task Type:**", "**Task:**"))
    before = tree_snapshot(project / ".okstra")
    with pytest.raises(ProblemsFound) as caught:
        dispatch.dispatch(run, contract(run))
    assert caught.value.problems and all(p.startswith("codex attempt 1: ") for p in caught.value.problems)
    assert tree_snapshot(project / ".okstra") == before
    assert set(server.panes()) == {server.lead}


def test_round_and_worker_filters(project):
    run = prepare(project, workers=("claude", "codex"), backend="cli-wrapper")
    assert dispatch.dispatch(run, contract(run), round_name="no-such-round").dispatched == []
    out = dispatch.dispatch(run, contract(run), workers=["codex"])
    assert [d.worker_id for d in out.dispatched] == ["codex"]
    wait_for(run, lambda b: b["codex"].status == "completed")
    with pytest.raises(RefusedError, match="nothing pending to dispatch for codex"):
        dispatch.dispatch(run, contract(run), workers=["codex"])
    with pytest.raises(StateError, match="no dispatch for worker 'nobody'"):
        dispatch.dispatch(run, contract(run), workers=["nobody"])
    lifecycle.teardown(run)


def test_redispatch_adds_a_fresh_attempt_and_never_reuses_the_old_result(project, monkeypatch):
    monkeypatch.setenv("OKSTRA_FAKE_MODE_CLAUDE", "crash")
    run = prepare(project, workers=("claude",), backend="cli-wrapper")
    dispatch.dispatch(run, contract(run))
    first = wait_for(run, lambda b: b["claude"].terminal)["claude"]
    assert first.status == "error"
    stale = project / first.result_path
    stale.write_text("a stale result that must never be read as attempt 2's\n")
    monkeypatch.setenv("OKSTRA_FAKE_MODE_CLAUDE", "ok")
    out = dispatch.dispatch(run, contract(run), redispatch=["claude"])
    assert [(d.worker_id, d.attempt) for d in out.dispatched] == [("claude", 2)]
    second = wait_for(run, lambda b: b["claude"].attempt == 2 and b["claude"].terminal)["claude"]
    assert second.status == "completed"
    assert len({first.prompt_path, second.prompt_path}) == 2 and second.result_path != first.result_path
    assert second.log_path != first.log_path and second.liveness_artifact != first.liveness_artifact
    assert (project / second.prompt_path).read_text() == (project / first.prompt_path).read_text()
    assert "stale" not in (project / second.result_path).read_text()
    assert stale.read_text().startswith("a stale result")
    assert [d.attempt for d in run.state().dispatches] == [1, 2]


def test_redispatch_refuses_a_worker_that_is_not_terminal(project):
    run = prepare(project, workers=("claude",), backend="cli-wrapper")
    before = tree_snapshot(project / ".okstra")
    with pytest.raises(RefusedError, match="attempt 1 is still pending"):
        dispatch.dispatch(run, contract(run), redispatch=["claude"])
    assert tree_snapshot(project / ".okstra") == before


def test_a_bad_pane_id_in_the_state_stops_dispatch_before_anything_starts(server, project, capsys):
    run = prepare(project, workers=("claude", "codex"), lead=server.lead)
    team_state.update_dispatch(run.team_state_path, "codex", 1, lambda d: d.evolve(pane_id="%1 ; kill-server"))
    before = tree_snapshot(project / ".okstra")
    assert team_dispatch.main(["--run-manifest", str(run.manifest_path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "is not a tmux-pane pane id" in err
    assert tree_snapshot(project / ".okstra") == before and set(server.panes()) == {server.lead}


def test_sixteen_workers_dispatch_each_in_its_own_pane(server, project, monkeypatch):
    monkeypatch.setenv("OKSTRA_FAKE_MODE", "hang")
    run = prepare(project, workers=("claude", "codex", "antigravity", "grok", "kimi"), lead=server.lead)
    # Eleven more pending attempts of the same workers (distinct paths) make sixteen.
    from okstra.model.dispatch import Dispatch
    from okstra.model.team_state import TeamState

    def grow(state: TeamState) -> TeamState:
        extra = []
        for i in range(11):
            base = state.dispatches[i % 5]
            extra.append(
                Dispatch(
                    worker_id=f"{base.worker_id}-x{i}",
                    role=base.role,
                    provider=base.provider,
                    model_id=base.model_id,
                    round=base.round,
                    prompt_path=base.prompt_path,
                    result_path=run.layout.relative(run.layout.result_path(f"{base.worker_id}-x{i}")),
                    log_path=run.layout.relative(run.layout.log_path(f"{base.worker_id}-x{i}")),
                )
            )
        return TeamState(state.run_id, state.dispatches + tuple(extra))

    team_state.update(run.team_state_path, grow)

    class Clean:  # the extra ids are not in the prompts' headers: a contract with no complaint
        catalog = contract(run).catalog

        def __call__(self, text, d):
            return []

    # How fast is `make bench`'s question (bench_team), never a timed assertion here.
    out = dispatch.dispatch(run, Clean())
    assert len(out.dispatched) == 16 and len({d.pane_id for d in out.dispatched}) == 16
    lifecycle.teardown(run, grace=3)


CLAIMER = """
import sys
sys.path.insert(0, {lib!r})
from okstra.model import layout
from okstra.team import dispatch
run = layout.open_run({manifest!r})
todo = run.state().dispatches
taken = dispatch._claim(run, todo, "2026-01-01T00:00:00Z")
print(" ".join(d.worker_id for d in taken))
"""


def test_parallel_claims_take_each_dispatch_exactly_once(project):
    """Ten processes claim the same pending dispatches at once: every worker is taken once."""
    import subprocess
    import sys
    from pathlib import Path

    from fixtures.runs import make_run

    layout, _ = make_run(project, ["claude", "codex", "grok", "kimi"])
    code = CLAIMER.format(lib=str(Path(dispatch.__file__).parents[2]), manifest=str(layout.manifest))
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE) for _ in range(10)]
    taken = [w for p in procs for w in p.communicate(timeout=60)[0].decode().split()]
    assert sorted(taken) == sorted(["claude-analyst", "codex-analyst", "grok-analyst", "kimi-analyst"])


def test_the_workers_of_a_dispatch_begin_once_its_command_has_returned(project, monkeypatch):
    """team-dispatch closes the run's launch gate before it starts the workers and keeps it
    until it exits (core.gate): here a process that dispatches and then waits plays it."""
    monkeypatch.setenv("OKSTRA_FAKE_MODE", "ok")
    run = prepare(project, workers=("claude",), backend="cli-wrapper")
    code = (
        f"import sys; sys.path.insert(0, {str(Path(dispatch.__file__).resolve().parents[2])!r})\n"
        "from okstra.model.layout import open_run\n"
        "from okstra.run import prompts\n"
        "from okstra.team import dispatch\n"
        f"run = open_run({str(run.manifest_path)!r}, project_root={str(project)!r})\n"
        "out = dispatch.dispatch(run, prompts.checker(run.root, run.manifest), launch_gate=run.layout.launch_gate)\n"
        "print(out.dispatched[0].pid, flush=True)\n"
        "sys.stdin.readline()\n"
    )
    command = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=project
    )
    try:
        worker = int(command.stdout.readline())
        environ = Path(f"/proc/{worker}/environ").read_bytes().split(b"\0")
        assert f"OKSTRA_LAUNCH_GATE={run.layout.launch_gate}".encode() in environ
        time.sleep(1)  # long enough for a worker-run that did not wait to record its start
        assert latest(run)["claude"].started_at is None
    finally:
        command.stdin.close()
        command.wait(60)
    assert wait_for(run, lambda b: b["claude"].terminal)["claude"].status == "completed"
