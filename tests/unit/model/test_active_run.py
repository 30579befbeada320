"""The one hydrating loader of `.okstra/active-run.json` (DESIGN §2)."""

from __future__ import annotations

import json

import pytest

from okstra.core.errors import StateError
from okstra.model import active_run
from okstra.model.active_run import ActiveRun, ApprovedStage

STAGE = {
    "number": 2,
    "title": "Rate limiter core",
    "plannedPaths": ["src/limiter.py", "tests/test_limiter.py"],
    "baseCommit": "abc1234",
}


def _write(root, doc, name="active-run.json"):
    path = root / ".okstra" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def _doc(stage):
    return {
        "schemaVersion": "1.0",
        "runId": "feature--x--r001",
        "taskKey": "feature/x",
        "taskType": "implementation",
        "runDir": ".okstra/runs/feature--x--r001",
        "runManifestPath": ".okstra/runs/feature--x--r001/run-manifest.json",
        "phase": "stage-2",
        "approvedStage": stage,
    }


def test_no_file_means_no_active_run(project):
    assert active_run.load(project) is None


def test_the_compacted_form_hydrates_the_approved_stage_and_its_planned_paths(project):
    _write(project, STAGE, "runs/feature--x--r001/stage-2.json")
    _write(project, _doc({"$ref": ".okstra/runs/feature--x--r001/stage-2.json"}))
    run = active_run.load(project)
    assert run.stage == ApprovedStage(2, "Rate limiter core", ("src/limiter.py", "tests/test_limiter.py"), "abc1234")
    assert run.stage.planned_paths == ("src/limiter.py", "tests/test_limiter.py")


def test_compacted_and_inline_forms_load_to_the_same_record(project):
    _write(project, _doc(STAGE))
    inline = active_run.load(project)
    _write(project, STAGE["plannedPaths"], "paths.json")
    _write(project, _doc({**STAGE, "plannedPaths": {"$ref": ".okstra/paths.json"}}))
    assert active_run.load(project) == inline


def test_the_record_round_trips_through_to_dict(project):
    record = ActiveRun(
        "feature--x--r001",
        "feature/x",
        "implementation",
        ".okstra/runs/feature--x--r001",
        ".okstra/runs/feature--x--r001/run-manifest.json",
        "dispatch",
        ApprovedStage(1, "t", ("a.py",)),
    )
    _write(project, record.to_dict())
    assert active_run.load(project) == record


@pytest.mark.parametrize("ref", ["../outside.json", "/etc/passwd", ".okstra/../../outside.json"])
def test_a_ref_outside_the_project_is_refused(project, ref):
    (project.parent / "outside.json").write_text(json.dumps(STAGE))
    _write(project, _doc({"$ref": ref}))
    with pytest.raises(StateError, match="outside the project"):
        active_run.load(project)


def test_a_ref_through_a_symlink_out_of_the_project_is_refused(project):
    (project.parent / "outside.json").write_text(json.dumps(STAGE))
    (project / "link.json").symlink_to(project.parent / "outside.json")
    _write(project, _doc({"$ref": "link.json"}))
    with pytest.raises(StateError, match="outside the project"):
        active_run.load(project)


def test_a_ref_to_a_missing_file_is_a_state_error_naming_it(project):
    _write(project, _doc({"$ref": ".okstra/nope.json"}))
    with pytest.raises(StateError, match="nope.json"):
        active_run.load(project)


def test_a_stage_without_a_number_is_refused(project):
    _write(project, _doc({"title": "x", "plannedPaths": []}))
    with pytest.raises(StateError, match="approvedStage"):
        active_run.load(project)


def test_set_phase_records_the_phase_of_its_own_run_only(project):
    path = _write(project, _doc(None))
    assert active_run.set_phase(project, "feature--x--r001", active_run.USER_GATE)
    assert active_run.load(project).phase == "user-gate"
    before = path.read_text()
    assert not active_run.set_phase(project, "other--run--r001", active_run.ROUND_BOUNDARY)
    assert path.read_text() == before


def test_end_removes_the_file_only_for_its_own_run(project):
    path = _write(project, _doc(STAGE))
    assert not active_run.end(project, "other--run--r001")
    assert path.exists()
    assert active_run.end(project, "feature--x--r001")
    assert not path.exists() and active_run.load(project) is None
    assert not active_run.end(project, "feature--x--r001")  # ended already: nothing to do
