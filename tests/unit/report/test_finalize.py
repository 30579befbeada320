"""report-finalize: report-number file names, header checks, sequence commit, final status."""

from __future__ import annotations

import json

import pytest

from conftest import tree_snapshot
from fixtures.reports import reportfix
from okstra.commands import report_finalize
from okstra.core import fsio
from okstra.core.errors import InputError, PathEscapeError, ProblemsFound
from okstra.model import layout as run_layout
from okstra.model import run_manifest
from okstra.model.active_run import ActiveRun
from okstra.model.layout import open_run
from okstra.report import finalize

KEY = "feature/rate-limit"


def _run(project, task_type="implementation-planning", run_number=3, report_number=1, active=False):
    """A prepared run whose run number and report number differ (DESIGN §2)."""
    project_layout = run_layout.for_project(project)
    run_id = project_layout.run_id(run_layout.TaskKey.parse(KEY), run_number)
    run = project_layout.run(run_id)
    rel = run.relative
    manifest = run_manifest.RunManifest(
        run_id=run_id,
        task_key=KEY,
        task_type=task_type,
        run_number=run_number,
        report_number=report_number,
        terminal_backend="cli-wrapper",
        created_at="2026-11-30T14:00:00Z",
        run_dir=rel(run.dir),
        team_state_path=rel(run.team_state),
        prompts_dir=rel(run.prompts_dir),
        results_dir=rel(run.results_dir),
        logs_dir=rel(run.logs_dir),
        reports_dir=rel(run.reports_dir),
    )
    fsio.write_json(run.manifest, manifest.to_dict())
    doc = reportfix.example(task_type)
    doc["header"].update(runNumber=run_number, reportNumber=report_number, runId=run_id)
    fsio.write_json(run.report_data(task_type, report_number), doc)
    if active:
        state = ActiveRun(run_id, KEY, task_type, rel(run.dir), rel(run.manifest), "report")
        fsio.write_json(project_layout.active_run, state.to_dict())
    return project_layout, run, manifest


def test_finalize_renders_by_report_number_commits_it_and_records_the_status(project):
    project_layout, run, manifest = _run(project)
    done = finalize.finalize(open_run(run.relative(run.manifest)))
    assert done.markdown == run.reports_dir / "final-report-implementation-planning-001.md"
    assert done.html == run.reports_dir / "final-report-implementation-planning-001.html"
    assert done.sidecar == run.responses_dir / "user-response-implementation-planning-001.md"
    assert done.last_valid == run.reports_dir / "final-report-implementation-planning-001.data.json.last-valid"
    assert done.markdown.is_file() and done.html.is_file()
    assert "r003" in run.run_id and "-003" not in done.markdown.name
    assert run_layout.peek(project_layout, run_layout.TaskKey.parse(KEY), "reports") == 2
    assert fsio.read_json(run.manifest)["finalStatus"] == finalize.FINAL_STATUS
    assert run_manifest.load(run.manifest).final_status == "completed"


def test_finalize_uses_the_active_run_by_default_and_is_idempotent(project, capsys):
    project_layout, run, _ = _run(project, "analysis", run_number=2, report_number=1, active=True)
    assert report_finalize.main(["--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["markdown"] == run.relative(run.reports_dir / "final-report-analysis-001.md")
    assert first["sidecar"].endswith("user-responses/user-response-analysis-001.md")
    assert (first["reportNumber"], first["runNumber"], first["finalStatus"]) == (1, 2, "completed")
    assert report_finalize.main([]) == 0
    assert "markdown" in capsys.readouterr().out
    assert run_layout.peek(project_layout, run_layout.TaskKey.parse(KEY), "reports") == 2


def test_a_refused_sidecar_is_said_as_a_warning_and_the_report_still_finalizes(project, capsys):
    _, run, _ = _run(project, "analysis", run_number=2, report_number=1, active=True)
    sidecar = run.sidecar("analysis", 1)
    sidecar.parent.mkdir(parents=True)
    sidecar.write_text("# User response\n\nwritten by hand, with no seal\n")
    assert report_finalize.main([]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and warnings[0].startswith("report-finalize: warning: Earlier answers were not loaded: ")
    assert f"{run.relative(sidecar)} has no okstra seal" in warnings[0]
    assert 'id="recorded-refused"' in (run.reports_dir / "final-report-analysis-001.html").read_text()


def test_a_report_naming_another_run_is_refused_before_anything_is_written(project):
    _, run, manifest = _run(project)
    data = run.report_data(manifest.task_type, manifest.report_number)
    doc = fsio.read_json(data)
    doc["header"]["reportNumber"] = 7
    fsio.write_json(data, doc)
    before = tree_snapshot(project)
    with pytest.raises(ProblemsFound) as caught:
        finalize.finalize(open_run(run.relative(run.manifest)))
    assert caught.value.problems == ["$.header.reportNumber: 7, but the run manifest says 1"]
    assert tree_snapshot(project) == before


def test_invalid_report_data_leaves_sequence_and_manifest_alone(project, capsys):
    _, run, manifest = _run(project)
    data = run.report_data(manifest.task_type, manifest.report_number)
    doc = fsio.read_json(data)
    del doc["implementationPlanning"]["stageMap"]
    fsio.write_json(data, doc)
    before = tree_snapshot(project)
    assert report_finalize.main(["--run-manifest", run.relative(run.manifest)]) == 1
    assert "$.implementationPlanning: 'stageMap' is a required property" in capsys.readouterr().err
    assert tree_snapshot(project) == before


def test_no_report_data_and_no_active_run_exit_2(project):
    _, run, manifest = _run(project)
    run.report_data(manifest.task_type, manifest.report_number).unlink()
    with pytest.raises(InputError, match="no report data for run"):
        finalize.finalize(open_run(run.relative(run.manifest)))
    with pytest.raises(InputError, match="no active run"):
        open_run(None)


def test_a_manifest_outside_the_project_is_refused(project):
    with pytest.raises(PathEscapeError):
        open_run("../elsewhere/run-manifest.json")
