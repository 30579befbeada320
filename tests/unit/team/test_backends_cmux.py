"""The cmux-pane backend against the fake `cmux` (tests/fakes/cmux), and a full run on it."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest

from fixtures.runs import FAKES
from fixtures.team import contract, latest, prepare, wait_for
from fixtures.tmux import reap
from okstra.core.errors import StateError
from okstra.model.dispatch import TORN_DOWN_REASON
from okstra.team import dispatch, lifecycle
from okstra.team.backends.base import LaunchSpec
from okstra.team.backends.cmux import CmuxBackend


@pytest.fixture
def cmux_log(tmp_path, monkeypatch):
    log = tmp_path / "cmux.log"
    monkeypatch.setenv("OKSTRA_FAKE_CMUX_LOG", str(log))
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ['PATH']}")
    yield log
    left = reap(str(tmp_path))
    assert not left, f"processes left running: {left}"


def calls(log: Path) -> list[list[str]]:
    return [json.loads(line)["argv"] for line in log.read_text().splitlines()] if log.exists() else []


def test_launch_makes_one_pane_then_surfaces_and_close_goes_by_recorded_id(cmux_log, tmp_path):
    out = tmp_path / "argv.json"
    hostile = ["a b", "it's", "x; touch pwned", "$(touch pwned2)", "`touch pwned3`"]
    code = f"import json,sys; open({str(out)!r},'a').write(json.dumps(sys.argv[1:])+chr(10))"
    b = CmuxBackend(run_id="feature--x--r001", project_root=tmp_path, env={"OKSTRA_X": "v w"})
    specs = [LaunchSpec(f"w{i}", 1, (sys.executable, "-c", code, *hostile), f"t{i}", tmp_path / "l", tmp_path) for i in range(3)]
    done = b.launch(specs)
    assert [d.pane_id for d in done] == ["surface:2", "surface:3", "surface:4"]
    made = calls(cmux_log)
    assert made[0][:6] == ["new-pane", "--type", "terminal", "--direction", "right", "--command"]
    assert made[1][:5] == ["new-surface", "--type", "terminal", "--pane", "pane:2"]
    assert shlex.split(made[0][6])[-len(hostile) :] == hostile
    deadline = time.monotonic() + 10
    while (not out.exists() or len(out.read_text().splitlines()) < 3) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [json.loads(x) for x in out.read_text().splitlines()] == [hostile] * 3
    assert not list(tmp_path.rglob("pwned*"))

    assert b.close(["surface:3"], dry_run=True).closed == ("surface:3",)
    # A dry run lists only surfaces still open: its count is what a real close closes.
    dry = b.close(["surface:3", "surface:9"], dry_run=True)
    assert (dry.closed, dry.gone) == (("surface:3",), ("surface:9",))
    result = b.close(["surface:3", "surface:9"])
    assert result.closed == ("surface:3",) and result.gone == ("surface:9",)
    assert calls(cmux_log)[-2:] == [["close-surface", "--surface", "surface:3"], ["close-surface", "--surface", "surface:9"]]
    b.close(["surface:2", "surface:4"])


def test_a_bad_surface_id_is_refused(cmux_log, tmp_path):
    b = CmuxBackend(run_id="r", project_root=tmp_path)
    for bad in ["%1", "surface:1; rm", "$(x)", "surface:"]:
        with pytest.raises(StateError, match="is not a cmux-pane pane id"):
            b.close([bad])
    assert calls(cmux_log) == []


def test_a_run_on_cmux_dispatches_reclaims_and_tears_down(cmux_log, project, monkeypatch):
    monkeypatch.setenv("OKSTRA_FAKE_MODE_GROK", "hang")
    run = prepare(project, workers=("claude", "grok"), backend="cmux-pane")
    outcome = dispatch.dispatch(run, contract(run))
    surfaces = {d.worker_id: d.pane_id for d in outcome.dispatched}
    wait_for(run, lambda by: by["claude"].status == "completed" and by["grok"].status == "in-progress")
    assert [p for p, _, _ in lifecycle.reclaim(run).closed] == [surfaces["claude"]]
    down = lifecycle.teardown(run, grace=3)
    assert [p for p, _, _ in down.closed] == [surfaces["grok"]] and down.survivors == []
    assert latest(run)["grok"].reason == TORN_DOWN_REASON
    closes = [c for c in calls(cmux_log) if c[0] == "close-surface"]
    # Teardown asks for every recorded surface; the one reclaim closed answers not_found and is left.
    assert {c[2] for c in closes} == {surfaces["claude"], surfaces["grok"]}
    assert down.gone == [surfaces["claude"]]
