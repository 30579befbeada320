from __future__ import annotations

import pytest

from okstra.core import errors
from okstra.model import team_state
from okstra.model.dispatch import COMPLETED, IN_PROGRESS, Usage
from okstra.model.layout import for_project, open_run
from okstra.model.run_manifest import load as load_manifest
from okstra.run import bundle, catalog, prompts, rounds


def _run(project, task_type="analysis"):
    made = bundle.render(
        project,
        bundle.BundleRequest("demo/round", task_type, brief="a test task", workers=("claude", "codex"), backend="cli-wrapper"),
    )
    return made, for_project(project).run(made.run_id)


def _complete(run, worker, text="# Findings\n\n## Finding 1: x\n"):
    state = team_state.load(run.team_state)
    d = state.find(worker)
    (run.project_root / d.result_path).write_text(text)
    team_state.update_dispatch(
        run.team_state, worker, d.attempt, lambda x: x.evolve(status=COMPLETED, usage=Usage(10, 5, 0, None))
    )


def test_the_report_writer_round_adds_a_fresh_attempt_with_its_own_paths(project):
    made, run = _run(project)
    _complete(run, "claude")
    _complete(run, "codex")
    prepared = rounds.prepare(open_run(made.run_manifest_path), "report-writer")
    assert [(d.worker_id, d.attempt, d.round, d.role) for d in prepared.dispatches] == [("claude", 2, "report", "report-writer")]
    new = team_state.load(run.team_state).find("claude")
    assert new.attempt == 2 and new.status == "pending"
    assert (
        new.result_path
        == run.relative(run.result_path("claude", 2))
        != team_state.load(run.team_state).find("claude", 1).result_path
    )
    text = (project / new.prompt_path).read_text()
    assert "## Results to work from" in text
    assert "results/claude.md" in text and "results/codex.md" in text
    manifest = load_manifest(made.run_manifest_path)
    assert prompts.check(text, manifest, new, catalog.load(project)) == []


def test_a_worker_still_running_refuses_the_round_and_writes_nothing(project):
    made, run = _run(project)
    _complete(run, "codex")
    team_state.update_dispatch(run.team_state, "claude", 1, lambda x: x.evolve(status=IN_PROGRESS))
    before = run.team_state.read_bytes()
    with pytest.raises(errors.RefusedError, match="worker claude is still in-progress"):
        rounds.prepare(open_run(made.run_manifest_path), "report-writer")
    assert run.team_state.read_bytes() == before
    assert not run.prompt_path("claude", 2).exists()


def test_no_completed_result_is_refused(project):
    made, run = _run(project)
    for worker in ("claude", "codex"):
        team_state.update_dispatch(run.team_state, worker, 1, lambda x: x.evolve(status="error", reason="crash"))
    with pytest.raises(errors.RefusedError, match="no completed result"):
        rounds.prepare(open_run(made.run_manifest_path), "report-writer")


@pytest.mark.parametrize("role", ["analyst", "leader", "nope"])
def test_a_first_round_or_unknown_role_is_refused(project, role):
    made, _ = _run(project)
    with pytest.raises(errors.InputError, match="not a later-round role"):
        rounds.prepare(open_run(made.run_manifest_path), role)


def test_a_worker_that_does_not_hold_the_role_is_refused(project):
    made, run = _run(project)
    _complete(run, "claude")
    with pytest.raises(errors.InputError, match="holders: claude"):
        rounds.prepare(open_run(made.run_manifest_path), "report-writer", ("codex",))
