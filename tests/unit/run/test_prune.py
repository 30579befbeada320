"""runs-prune (run.prune): age from the last change, the active run always kept."""

from __future__ import annotations

import json
import os
import time

from okstra.run import prune


def _run(project, run_id, age_days):
    folder = project / ".okstra" / "runs" / run_id
    (folder / "logs").mkdir(parents=True)
    (folder / "logs" / "w.log").write_text("x" * 100)
    past = time.time() - age_days * 86400
    for path in (folder / "logs" / "w.log", folder / "logs", folder):
        os.utime(path, (past, past))
    return folder


def _activate(project, run_id):
    pointer = {
        "runId": run_id,
        "taskKey": "a/b",
        "taskType": "analysis",
        "runDir": f".okstra/runs/{run_id}",
        "runManifestPath": f".okstra/runs/{run_id}/run-manifest.json",
        "phase": "analysis",
        "approvedStage": None,
    }
    (project / ".okstra" / "active-run.json").write_text(json.dumps(pointer))


def test_old_runs_go_young_and_active_ones_stay(project):
    old = _run(project, "a--b--r001", 40)
    young = _run(project, "a--b--r002", 2)
    active = _run(project, "a--b--r003", 90)
    _activate(project, "a--b--r003")
    done = prune.prune(project, 30 * 86400)
    assert [(c.run_id, c.pruned, c.size_bytes) for c in done] == [("a--b--r001", True, 100)]
    assert not old.exists() and young.exists() and active.exists()


def test_dry_run_removes_nothing_and_lists_oldest_first(project):
    _run(project, "a--b--r001", 40)
    _run(project, "a--b--r002", 60)
    done = prune.prune(project, 30 * 86400, dry_run=True)
    assert [(c.run_id, c.pruned) for c in done] == [("a--b--r002", False), ("a--b--r001", False)]
    assert (project / ".okstra" / "runs" / "a--b--r002").is_dir()


def test_a_recent_file_deep_inside_makes_the_run_young(project):
    folder = _run(project, "a--b--r001", 40)
    (folder / "logs" / "w.log").touch()
    assert prune.old_runs(project, 30 * 86400) == []


def test_no_runs_folder_is_nothing_to_do(project):
    assert prune.prune(project, 1) == []


def test_a_prune_killed_midway_leaves_a_hidden_leftover_never_half_a_run(project):
    """A run is renamed away in one step before it is removed; what a killed prune left
    (`.<id>.pruned.tmp`) is not a run, and the next prune removes it. A render-bundle's
    staging folder (a dot name) is never taken for a run, however old."""
    runs = project / ".okstra" / "runs"
    _run(project, "a--old--r001", 40)
    leftover = _run(project, "a--gone--r001", 40).rename(runs / ".a--gone--r001.pruned.tmp")
    staging = _run(project, "a--new--r001", 40).rename(runs / ".a--new--r001.x1y2.tmp")
    assert [c.run_id for c in prune.old_runs(project, 30 * 86400)] == ["a--old--r001"]
    removed = prune.prune(project, 30 * 86400)
    assert [c.run_id for c in removed] == ["a--old--r001"]
    assert sorted(p.name for p in runs.iterdir()) == [staging.name]
    assert not leftover.exists()
