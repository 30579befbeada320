"""model.run_manifest: the run manifest (DESIGN §2), parsed once from its stored form."""

from __future__ import annotations

import dataclasses
import json

import pytest

from fixtures.runs import make_run
from okstra.core import fsio, schemas
from okstra.core.errors import InputError, StateError
from okstra.model import run_manifest
from okstra.model.run_manifest import Assignment, Participant, RoleExecution, RunManifest
from okstra.team.backends.registry import BACKENDS


@pytest.fixture
def made(project):
    layout, manifest = make_run(project, ["claude", {"provider": "codex", "role": "critic"}])
    return layout, manifest


def _full(manifest: RunManifest) -> RunManifest:
    return manifest.evolve(
        lead_pane_id="%3",
        report_language="ko",
        stage=2,
        base_commit="0" * 40,
        final_status="completed",
        active_run_context={"stage": 2, "plan": ".okstra/runs/x/reports/final-report-implementation-planning-001.md"},
    )


def test_a_manifest_written_to_disk_loads_back_equal(made):
    layout, manifest = made
    full = _full(manifest)
    fsio.write_json(layout.manifest, full.to_dict())
    assert run_manifest.load(layout.manifest) == full


def test_the_stored_form_is_a_valid_run_manifest_document(made):
    _, manifest = made
    for doc in (manifest.to_dict(), _full(manifest).to_dict()):
        assert schemas.problems("run-manifest", doc) == []
        assert doc["schemaVersion"] == run_manifest.SCHEMA_VERSION == "1.0"


def test_the_stored_form_uses_the_documented_camel_case_names(made):
    _, manifest = made
    doc = manifest.to_dict()
    assert doc["invocationAssignments"][0] == {
        "workerId": "claude-analyst",
        "provider": "claude",
        "modelId": "claude-sonnet-4-5",
        "cliModel": "claude-sonnet-4-5",
        "runner": "cli-wrapper",
        "roles": ["analyst"],
    }
    assert doc["participants"][1]["workerId"] == "codex-critic" and doc["participants"][1]["role"] == "critic"
    assert doc["roleExecutions"][1] == {
        "role": "critic",
        "workerId": "codex-critic",
        "provider": "codex",
        "modelId": "gpt-5-codex",
        "runner": "cli-wrapper",
    }
    assert (doc["runId"], doc["taskKey"], doc["teamStatePath"]) == (
        "feature--rate-limit--r001",
        "feature/rate-limit",
        ".okstra/runs/feature--rate-limit--r001/team-state.json",
    )


def test_the_task_types_and_backends_are_the_ones_the_schema_and_registry_know():
    doc = json.loads(schemas.path_of("run-manifest").read_text(encoding="utf-8"))
    assert list(run_manifest.TASK_TYPES) == doc["$defs"]["taskType"]["enum"]
    assert list(run_manifest.BACKENDS) == doc["properties"]["terminalBackend"]["enum"]
    assert set(run_manifest.BACKENDS) == set(BACKENDS)


def test_a_workers_assignment_is_found_by_its_id(made):
    _, manifest = made
    assert manifest.assignment("codex-critic") == Assignment(
        "codex-critic", "codex", "gpt-5-codex", "gpt-5-codex", "cli-wrapper", ("critic",)
    )


def test_an_unknown_worker_is_refused_naming_the_run_and_the_known_workers(made):
    _, manifest = made
    with pytest.raises(StateError) as refused:
        manifest.assignment("grok-analyst")
    assert str(refused.value) == (
        "run feature--rate-limit--r001 has no worker 'grok-analyst'; known workers: claude-analyst, codex-critic"
    )


def test_a_run_with_no_assignments_says_none_are_known(made):
    _, manifest = made
    with pytest.raises(StateError, match=r"; known workers: none$"):
        manifest.evolve(assignments=()).assignment("claude-analyst")


def test_evolve_gives_a_changed_copy_and_the_record_is_frozen(made):
    _, manifest = made
    ended = manifest.evolve(final_status="completed")
    assert (manifest.final_status, ended.final_status) == (None, "completed")
    with pytest.raises(dataclasses.FrozenInstanceError):
        manifest.final_status = "x"  # type: ignore[misc]


def test_a_document_that_is_not_an_object_is_refused_naming_its_source():
    with pytest.raises(StateError) as refused:
        RunManifest.from_dict([], "runs/x/run-manifest.json")
    assert str(refused.value) == "runs/x/run-manifest.json: not a run-manifest document (expected an object)"


def test_a_missing_field_is_refused_naming_it(made):
    _, manifest = made
    doc = manifest.to_dict()
    del doc["teamStatePath"]
    with pytest.raises(StateError) as refused:
        RunManifest.from_dict(doc, "m.json")
    assert str(refused.value) == "m.json: not a valid run manifest: missing or bad field 'teamStatePath'"


def test_a_bad_number_is_refused_not_crashed_on(made):
    _, manifest = made
    doc = manifest.to_dict() | {"runNumber": "three"}
    with pytest.raises(StateError) as refused:
        RunManifest.from_dict(doc, "m.json")
    assert str(refused.value) == (
        "m.json: not a valid run manifest: missing or bad field invalid literal for int() with base 10: 'three'"
    )


def test_a_participant_lacking_a_field_is_refused(made):
    _, manifest = made
    doc = manifest.to_dict()
    del doc["participants"][0]["modelDisplay"]
    with pytest.raises(StateError, match=r"^m.json: not a valid run manifest: missing or bad field 'modelDisplay'$"):
        RunManifest.from_dict(doc, "m.json")


def test_optional_fields_absent_from_an_older_document_read_as_empty(made):
    _, manifest = made
    doc = manifest.to_dict()
    for key in ("leadPaneId", "reportLanguage", "stage", "baseCommit", "finalStatus", "activeRunContext"):
        del doc[key]
    for key in ("participants", "roleExecutions", "invocationAssignments"):
        del doc[key]
    loaded = RunManifest.from_dict(doc)
    assert (loaded.lead_pane_id, loaded.stage, loaded.final_status, dict(loaded.active_run_context)) == (None, None, None, {})
    assert (loaded.participants, loaded.role_executions, loaded.assignments) == ((), (), ())


def test_loading_a_file_that_is_not_json_names_the_file_and_line(made):
    layout, _ = made
    layout.manifest.write_text('{"runId": "x",\n  oops}\n', encoding="utf-8")
    with pytest.raises(InputError, match=rf"^{layout.manifest}: not valid JSON at line 2 column 3"):
        run_manifest.load(layout.manifest)


def test_loading_a_missing_file_says_which_and_what_it_is(tmp_path):
    with pytest.raises(InputError) as refused:
        run_manifest.load(tmp_path / "run-manifest.json")
    assert str(refused.value) == f"{tmp_path / 'run-manifest.json'}: no such run manifest; check the path"


def test_each_roster_record_round_trips_on_its_own():
    p = Participant("claude-analyst", "analyst", "claude", "Claude", "claude-sonnet-4-5", "Sonnet 4.5")
    r = RoleExecution("analyst", "claude-analyst", "claude", "claude-sonnet-4-5", "cli-wrapper")
    a = Assignment("claude-analyst", "claude", "claude-sonnet-4-5", "sonnet", "cli-wrapper", ("analyst", "critic"))
    assert Participant.from_dict(p.to_dict()) == p
    assert RoleExecution.from_dict(r.to_dict()) == r
    assert Assignment.from_dict(json.loads(json.dumps(a.to_dict()))) == a
