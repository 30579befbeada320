"""render-bundle --stage N --plan PLAN: the approved stage becomes the write guard's scope."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import tree_snapshot
from okstra.commands import render_bundle
from okstra.core import errors, seal
from okstra.model import active_run
from okstra.model.layout import for_project
from okstra.model.run_manifest import load as load_manifest
from okstra.report import stage_queue, user_response
from okstra.run import bundle

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "reports" / "implementation-planning.data.json"
KEY = "feature/rate-limit"


def _plan(project: Path, *, approve: str | None = "approved") -> str:
    run = for_project(project).run("feature--rate-limit--r002")
    data = run.report_data("implementation-planning", 1)
    data.parent.mkdir(parents=True)
    shutil.copy(FIXTURE, data)
    markdown = run.report_markdown("implementation-planning", 1)
    markdown.write_text("# plan\n")
    rel = run.relative(markdown)
    if approve:
        decision = {"status": approve, "option": "A", "reason": "looks right"}
        user_response.write(project, rel, "{}", plan_decision=json.dumps(decision))
    return rel


def _stage(project: Path, n: int, plan: str | None, *, allow_dirty: bool = True) -> bundle.BundleResult:
    request = bundle.BundleRequest(
        KEY, "implementation", workers=("claude", "codex"), backend="cli-wrapper", stage=n, plan=plan, allow_dirty=allow_dirty
    )
    return bundle.render(project, render_bundle.planned_request(project, request))


def test_stage_one_of_an_approved_plan_becomes_the_approved_stage(project):
    made = _stage(project, 1, _plan(project))
    stage = active_run.load(project).stage
    assert (stage.number, stage.title, stage.planned_paths, stage.base_commit) == (
        1,
        "Limiter core and Lua script",
        ("api/limiter/**", "tests/limiter/**"),
        None,
    )
    manifest = load_manifest(made.run_manifest_path)
    assert (manifest.stage, manifest.base_commit) == (1, None)
    assert manifest.active_run_context["approvedStage"]["plannedPaths"] == ["api/limiter/**", "tests/limiter/**"]


def test_the_next_stage_starts_from_its_dependency_s_done_head(project):
    plan = _plan(project)
    stage_queue.record(for_project(project), KEY, 1, "done", "a1b2c3d4")
    _stage(project, 2, plan)
    assert active_run.load(project).stage.base_commit == "a1b2c3d4"


def test_a_stage_whose_dependency_is_not_done_is_refused_and_nothing_written(project):
    plan = _plan(project)
    before = sorted(p for p in (project / ".okstra").rglob("*") if p.is_file())
    with pytest.raises(errors.RefusedError, match="depends on stage"):
        _stage(project, 2, plan)
    assert sorted(p for p in (project / ".okstra").rglob("*") if p.is_file()) == before


@pytest.mark.parametrize("decision", [None, "revision-requested"])
def test_a_plan_without_an_approved_decision_is_refused(project, decision):
    plan = _plan(project, approve=decision)
    with pytest.raises(errors.RefusedError, match="is not approved"):
        _stage(project, 1, plan)
    assert not active_run.path_for(project).exists()


def _widen(project: Path) -> None:
    """Edit the approved plan's data: stage 1 may now write everywhere."""
    data = for_project(project).run("feature--rate-limit--r002").report_data("implementation-planning", 1)
    doc = json.loads(data.read_text())
    doc["implementationPlanning"]["stageMap"][0]["plannedPaths"] = ["**"]
    data.write_text(json.dumps(doc))


def test_a_plan_changed_after_approval_is_refused_and_nothing_written(project):
    plan = _plan(project)
    _widen(project)
    before = tree_snapshot(project)
    with pytest.raises(errors.RefusedError) as refused:
        _stage(project, 1, plan)
    assert "changed after approval" in str(refused.value) and "approve it again" in str(refused.value)
    assert "\n" not in str(refused.value)
    assert tree_snapshot(project) == before


def test_the_command_names_the_plan_file_in_one_line_and_exits_2(project, capsys):
    plan = _plan(project)
    _widen(project)
    argv = ["--task-key", KEY, "--task-type", "implementation", "--workers", "claude", "--backend", "cli-wrapper"]
    assert render_bundle.main([*argv, "--stage", "1", "--plan", plan]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and plan in err and "final-report-implementation-planning-001.data.json" in err


def test_a_plan_approved_again_after_the_change_renders_the_new_stage(project):
    plan = _plan(project)
    _widen(project)
    user_response.write(project, plan, "{}", plan_decision='{"status": "approved", "option": "A"}')
    _stage(project, 1, plan)
    assert active_run.load(project).stage.planned_paths == ("**",)


def test_a_plan_approved_before_approvals_were_bound_to_the_data_is_refused(project):
    plan = _plan(project)
    sidecar = for_project(project).run("feature--rate-limit--r002").sidecar("implementation-planning", 1)
    text = seal.open_text(sidecar.read_text(), "s", required=True)
    legacy = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("- plan-sha256:"))
    sidecar.write_text(seal.seal_text(legacy))  # as okstra wrote it before the binding
    with pytest.raises(errors.RefusedError, match="without binding the approval to its data"):
        _stage(project, 1, plan)
    assert not active_run.path_for(project).exists()


def test_stage_without_plan_and_plan_without_stage_are_usage_errors(project):
    with pytest.raises(errors.InputError, match="--stage needs --plan"):
        _stage(project, 1, None)
    request = bundle.BundleRequest(KEY, "implementation", backend="cli-wrapper", plan="x.md")
    with pytest.raises(errors.InputError, match="--plan goes with --stage"):
        bundle.render(project, request)


def test_a_plan_outside_the_project_is_refused(project, tmp_path):
    with pytest.raises(errors.PathEscapeError):
        _stage(project, 1, str(tmp_path / "elsewhere.md"))


def _git(project: Path, *args: str) -> str:
    import subprocess

    git = ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    return subprocess.run([*git, *args], check=True, capture_output=True, text=True).stdout.strip()


def test_a_stage_render_takes_the_stages_plan_text_as_its_brief(project):
    made = _stage(project, 1, _plan(project))
    text = (made.run_dir / "brief.md").read_text()
    assert text.startswith("Implementation stage 1 of the approved plan")
    assert "Limiter core and Lua script" in text and "`api/limiter/**`" in text
    assert "Limiter core and Lua script" in next(iter(made.prompt_paths.values())).read_text()


def test_git_reconcile_refuses_a_dirty_tree_or_another_head_unless_allow_dirty(project):
    (project / "tracked.txt").write_text("one\n")
    _git(project, "add", "tracked.txt")
    _git(project, "commit", "-qm", "one")
    base = _git(project, "rev-parse", "HEAD")
    plan = _plan(project)
    stage_queue.record(for_project(project), KEY, 1, "done", base[:12])
    (project / "tracked.txt").write_text("two\n")
    (project / "untracked.txt").write_text("never blocks\n")
    with pytest.raises(errors.ProblemsFound) as refused:
        _stage(project, 2, plan, allow_dirty=False)
    assert refused.value.problems[0] == "stage 2 cannot start here: uncommitted changes to tracked files: tracked.txt"
    assert not active_run.path_for(project).exists()
    _git(project, "commit", "-qam", "two")
    with pytest.raises(errors.ProblemsFound) as refused:
        _stage(project, 2, plan, allow_dirty=False)
    assert refused.value.problems[0].startswith("stage 2 cannot start here: HEAD is ")
    assert f"base commit {base[:12]}" in refused.value.problems[0]
    _git(project, "reset", "-q", "--hard", base)
    assert _stage(project, 2, plan, allow_dirty=False).manifest.base_commit == base[:12]
