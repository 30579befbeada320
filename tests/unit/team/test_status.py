"""team-status: the table with the evidence behind each status, and --explain."""

from __future__ import annotations

import json
import os

import pytest

from fixtures.runs import FAKES
from fixtures.team import contract, prepare, wait_for
from fixtures.tmux import reap
from okstra.commands import team_status
from okstra.core import fsio
from okstra.model import team_state
from okstra.model.dispatch import FailoverFrom, Usage
from okstra.team import dispatch, lifecycle, status


@pytest.fixture(autouse=True)
def fakes(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ['PATH']}")
    yield
    left = reap(str(tmp_path))
    assert not left


def test_the_table_shows_each_worker_with_its_evidence(project, monkeypatch, capsys):
    monkeypatch.setenv("OKSTRA_FAKE_MODE_GROK", "hang")
    run = prepare(project, workers=("claude", "grok"), backend="cli-wrapper")
    dispatch.dispatch(run, contract(run))
    wait_for(run, lambda b: b["claude"].status == "completed" and b["grok"].status == "in-progress")
    assert team_status.main(["--run-manifest", str(run.manifest_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:7] == ["WORKER", "ROLE", "PROVIDER/MODEL", "STATUS", "ATTEMPT", "AGE", "TOKENS"]
    claude = next(line for line in lines if line.startswith("claude"))
    grok = next(line for line in lines if line.startswith("grok"))
    assert "completed" in claude and " in / " in claude  # the fake claude reports token usage
    assert "in-progress" in grok and "artifact" in grok
    assert team_status.main(["--run-manifest", str(run.manifest_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    by = {w["workerId"]: w for w in doc["workers"]}
    assert by["claude"]["health"]["done"] is True and by["claude"]["health"]["evidence"]["resultSize"] > 0
    assert by["grok"]["health"]["evidence"]["pidAlive"] is True
    lifecycle.teardown(run, grace=3)


def test_explain_lists_the_evidence(project, capsys):
    run = prepare(project, workers=("claude",), backend="cli-wrapper")
    team_state.update_dispatch(
        run.team_state_path,
        "claude",
        1,
        lambda d: d.evolve(
            status="error",
            started_at="2026-11-30T12:00:00Z",
            finished_at="2026-11-30T12:01:30Z",
            exit_code=1,
            pid=999999,
            reason="rate-limited",
            usage=Usage(10, 20, 5),
        ),
    )
    assert team_status.main(["--run-manifest", str(run.manifest_path), "--explain", "claude"]) == 0
    out = capsys.readouterr().out
    for expected in [
        "startedAt      2026-11-30T12:00:00Z",
        "exit code      1",
        "reason         rate-limited",
        "pid            999999 (not running",
        "result",
        "absent",
        "unhealthy: ended error: rate-limited",
        "10 in / 20 out (5 cached)",
    ]:
        assert expected in out, expected
    rows = status.table(run, run.state())
    assert rows[0].age == 90.0


def test_an_unknown_worker_is_exit_2_with_one_line(project, capsys):
    run = prepare(project, workers=("claude",), backend="cli-wrapper")
    assert team_status.main(["--run-manifest", str(run.manifest_path), "--explain", "nobody"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no dispatch for worker 'nobody'" in err[0]


def test_a_served_model_other_than_the_asked_one_and_denied_writes_are_shown_plainly(project, capsys):
    run = prepare(project, workers=("claude",), backend="cli-wrapper")
    team_state.update_dispatch(
        run.team_state_path,
        "claude",
        1,
        lambda d: d.evolve(
            status="completed",
            cli_model=d.model_id,
            served_model="claude-opus-4-8",
            denials=({"tool": "Write", "target": "/p/README.md"},),
            last_event="result: done",
            last_activity_at="2026-11-30T12:01:29Z",
        ),
    )
    assert team_status.main(["--run-manifest", str(run.manifest_path)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("claude"))
    assert "(SERVED BY claude-opus-4-8)" in row
    assert team_status.main(["--run-manifest", str(run.manifest_path), "--explain", "claude"]) == 0
    out = capsys.readouterr().out
    assert "served model   claude-opus-4-8 (NOT the asked model)" in out
    assert "denied writes  1: Write /p/README.md" in out
    assert team_status.main(["--run-manifest", str(run.manifest_path), "--json"]) == 0
    [worker] = json.loads(capsys.readouterr().out)["workers"]
    assert worker["servedModel"] == "claude-opus-4-8" and worker["modelMismatch"] is True
    assert worker["denials"] == [{"tool": "Write", "target": "/p/README.md"}]


def test_a_failover_is_shown_who_stands_in_for_whom_with_the_reason_and_the_open_breakers(project, capsys):
    run = prepare(project, workers=("claude", "codex"), backend="cli-wrapper")
    limit = "rate-limited: You've hit your usage limit."
    team_state.update_dispatch(run.team_state_path, "codex", 1, lambda d: d.evolve(status="error", reason=limit))
    team_state.update_dispatch(run.team_state_path, "claude", 1, lambda d: d.evolve(status="completed"))

    def stand_in(state):
        claude = state.find("claude")
        new = claude.evolve(attempt=2, status="pending", role="analyst", failover_from=FailoverFrom("codex", 1, "codex", limit))
        return team_state.TeamState(state.run_id, (*state.dispatches, new))

    team_state.update(run.team_state_path, stand_in)
    assert team_status.main(["--run-manifest", str(run.manifest_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert (
        f"failover: claude attempt 2 (claude/claude-sonnet-4-5) stands in for codex attempt 1 (codex) as analyst: {limit}"
        in lines
    )
    assert "failover: breaker open (skipped for the rest of the run): codex" in lines
    assert team_status.main(["--run-manifest", str(run.manifest_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["failover"]["breakerOpen"] == ["codex"]
    assert doc["failover"]["standIns"] == [
        {
            "workerId": "claude",
            "attempt": 2,
            "provider": "claude",
            "modelId": "claude-sonnet-4-5",
            "role": "analyst",
            "standsInFor": {"workerId": "codex", "attempt": 1, "provider": "codex", "reason": limit},
        }
    ]
    by = {w["workerId"]: w for w in doc["workers"]}
    assert by["claude"]["failoverFrom"]["workerId"] == "codex" and by["codex"]["failoverFrom"] is None
    assert team_status.main(["--run-manifest", str(run.manifest_path), "--explain", "claude"]) == 0
    assert f"stands in for  codex attempt 1 (codex): {limit}" in capsys.readouterr().out


def test_without_a_failover_there_is_no_failover_line(project, capsys):
    run = prepare(project, workers=("claude",), backend="cli-wrapper")
    assert team_status.main(["--run-manifest", str(run.manifest_path)]) == 0
    assert "failover:" not in capsys.readouterr().out
    assert team_status.main(["--run-manifest", str(run.manifest_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["failover"] == {"standIns": [], "breakerOpen": []}


@pytest.mark.parametrize("options", [[], ["--json"], ["--all"], ["--explain", "claude"], ["--explain", "claude", "--json"]])
def test_one_call_reads_and_checks_the_team_state_once(project, monkeypatch, capsys, options):
    run = prepare(project, workers=("claude", "codex"), backend="cli-wrapper")
    loads, file_reads = [], []
    load, read_json = team_state.load, fsio.read_json

    def counted_load(path):
        loads.append(path)
        return load(path)

    def counted_read(path, *args, **kwargs):
        file_reads.append(path)
        return read_json(path, *args, **kwargs)

    monkeypatch.setattr(team_state, "load", counted_load)
    monkeypatch.setattr(fsio, "read_json", counted_read)
    assert team_status.main(["--run-manifest", str(run.manifest_path), *options]) == 0
    assert capsys.readouterr().out
    assert loads == [run.team_state_path], f"team_state.load called {len(loads)} times"
    reads = [p for p in file_reads if p == run.team_state_path]
    assert len(reads) == 1, f"the team-state file read {len(reads)} times"
