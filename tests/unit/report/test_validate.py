"""Report data validation: the schema (every error with its JSON path) and the cross-file facts."""

from __future__ import annotations

import json

import pytest

from fixtures.reports import reportfix
from okstra.core import fsio, seal
from okstra.core.errors import InputError, PathEscapeError, StateError
from okstra.model import team_state
from okstra.report import sidecar, validate

BROKEN = reportfix.broken_expectations()


@pytest.mark.parametrize("task_type", reportfix.TASK_TYPES)
def test_every_example_report_is_valid(task_type, tmp_path):
    assert validate.problems(reportfix.example(task_type), tmp_path) == []


def test_there_is_one_broken_fixture_per_listed_rule():
    files = {p.name.removesuffix(".data.json") for p in reportfix.BROKEN.glob("*.data.json")}
    assert files == set(BROKEN)
    assert len(files) >= 25


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_each_broken_fixture_is_reported_at_its_json_path(name, tmp_path):
    expected = BROKEN[name]
    document = json.loads((reportfix.BROKEN / f"{name}.data.json").read_text(encoding="utf-8"))
    found = validate.problems(document, tmp_path)
    assert found, f"{name} passed validation"
    matching = [line for line in found if line.startswith(expected["path"] + ": ")]
    assert matching, f"{name}: no problem at {expected['path']}: {found}"
    assert any(expected["contains"] in line for line in matching), found


def test_every_error_is_reported_not_only_the_first(tmp_path):
    doc = reportfix.example("analysis")
    doc["header"]["createdAt"] = "not a time"
    doc["findings"][0]["severity"] = "severe"
    doc["findings"][3]["evidence"][0]["lines"] = "x"
    doc["participants"][0]["provider"] = "Copilot"
    paths = [line.split(": ", 1)[0] for line in validate.problems(doc, tmp_path)]
    assert paths == [
        "$.findings[0].severity",
        "$.findings[3].evidence[0].lines",
        "$.header.createdAt",
        "$.participants[0].provider",
    ]


def test_formats_are_checked(tmp_path):
    doc = reportfix.example("implementation")
    doc["header"]["createdAt"] = "2026-13-45T99:00:00Z"
    assert validate.problems(doc, tmp_path) == ["$.header.createdAt: '2026-13-45T99:00:00Z' is not a 'date-time'"]


@pytest.mark.parametrize("value", ["F1\n", "x\ny", "tab\r", "   ", ""])
def test_one_line_fields_refuse_line_breaks_even_a_trailing_one(value, tmp_path):
    doc = reportfix.example("analysis")
    doc["findings"][0]["title"] = value
    assert validate.problems(doc, tmp_path) == [
        f"$.findings[0].title: {value!r} is not one line of text (no line breaks), not blank"
    ]


def test_a_failed_pattern_says_what_the_field_expects_never_the_regex(tmp_path):
    doc = reportfix.example("analysis")
    doc["findings"][0]["evidence"][0]["lines"] = "line five"
    doc["header"]["taskKey"] = "Feature Rate"
    found = validate.problems(doc, tmp_path)
    assert "$.findings[0].evidence[0].lines: 'line five' is not line numbers like 42, 10-24 or 3, 7-9" in found
    assert any(p.startswith("$.header.taskKey: 'Feature Rate' is not a task key GROUP/ID") for p in found)
    assert not any("(?!" in p or "\\S" in p for p in found)


def test_a_trailing_newline_does_not_slip_through_an_anchored_pattern(tmp_path):
    doc = reportfix.example("analysis")
    doc["header"]["runId"] = "feature--rate-limit--r001\n"
    assert [p.split(":")[0] for p in validate.problems(doc, tmp_path)] == ["$.header.runId"]


def test_a_non_object_document_is_a_problem_not_a_crash(tmp_path):
    assert validate.problems([1, 2], tmp_path) == ["$: [1, 2] is not of type 'object'"]


def test_release_handoff_may_be_lead_authored_without_a_fallback(tmp_path):
    doc = reportfix.example("release-handoff")
    assert doc["header"]["reportAuthor"] == validate.LEAD_AUTHOR
    assert validate.problems(doc, tmp_path) == []


def test_load_refuses_unreadable_and_malformed_files(tmp_path):
    with pytest.raises(InputError, match="no such report data file"):
        validate.load(tmp_path / "missing.data.json")
    (tmp_path / "bad.data.json").write_text('{"schemaVersion": ', encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON at line 1"):
        validate.load(tmp_path / "bad.data.json")
    (tmp_path / "latin.data.json").write_bytes(b'{"a": "\xe9"}')
    with pytest.raises(InputError, match="not UTF-8"):
        validate.load(tmp_path / "latin.data.json")
    with pytest.raises(InputError, match="is a directory"):
        validate.load(tmp_path)


# ---------------------------------------------------------------- cross-file facts


def _fallback(project):
    data = reportfix.place_fallback(project)
    return data, json.loads(data.read_text(encoding="utf-8"))


def test_the_fallback_fixture_passes_every_cross_file_check(project):
    _, doc = _fallback(project)
    assert validate.problems(doc, project) == []


def test_a_reason_that_differs_from_the_recorded_one_is_a_problem(project):
    _, doc = _fallback(project)
    doc["header"]["leadAuthoredFallback"]["dispatchFailureReason"] = "it timed out"
    found = validate.problems(doc, project)
    assert len(found) == 1
    assert found[0].startswith(
        "$.header.leadAuthoredFallback.dispatchFailureReason: differs from the reason recorded for every failed "
        "report-writer dispatch"
    )
    assert "API rate limit reached" in found[0]


def test_the_reason_must_match_verbatim_not_just_loosely(project):
    _, doc = _fallback(project)
    doc["header"]["leadAuthoredFallback"]["dispatchFailureReason"] += " "
    assert [p.split(":")[0] for p in validate.problems(doc, project)] == ["$.header.leadAuthoredFallback.dispatchFailureReason"]


def test_the_failed_dispatch_must_be_a_report_writer_that_failed(project):
    _, doc = _fallback(project)
    for attempt in (1, 2):
        team_state.update_dispatch(
            project / reportfix.FALLBACK_TEAM_STATE, "report-writer", attempt, lambda d: d.evolve(status="completed", reason=None)
        )
    assert validate.problems(doc, project) == [
        f"$.header.leadAuthoredFallback: {reportfix.FALLBACK_TEAM_STATE} records no failed report-writer dispatch"
    ]


def test_a_run_without_team_state_is_a_problem(project):
    _, doc = _fallback(project)
    (project / reportfix.FALLBACK_TEAM_STATE).unlink()
    found = validate.problems(doc, project)
    assert found[0].startswith("$.header.runId: run 'feature--rate-limit--r002' has no team state")


def test_an_invalid_team_state_file_cannot_be_checked(project):
    _, doc = _fallback(project)
    (project / reportfix.FALLBACK_TEAM_STATE).write_text('{"runId": "x"}', encoding="utf-8")
    with pytest.raises(StateError):
        validate.problems(doc, project)


def test_a_missing_approval_sidecar_is_a_problem(project):
    _, doc = _fallback(project)
    (project / reportfix.FALLBACK_SIDECAR).unlink()
    assert validate.problems(doc, project) == [
        f"$.header.leadAuthoredFallback.approvalSidecar: {reportfix.FALLBACK_SIDECAR!r} does not exist"
    ]


def _rewrite_sidecar(project, **changes):
    path = project / reportfix.FALLBACK_SIDECAR
    old = sidecar.parse(path.read_text(encoding="utf-8"), str(path))
    fields = {"meta": old.meta, "answers": old.answers, **changes}
    path.write_text(seal.seal_text(sidecar.serialize(sidecar.Responses(**fields))), encoding="utf-8")  # as okstra writes it


def test_a_denial_is_not_an_approval(project):
    _, doc = _fallback(project)
    _rewrite_sidecar(project, report_authoring=sidecar.ReportAuthoring("denied", "wait for the report-writer"))
    (problem,) = validate.problems(doc, project)
    assert problem.endswith("records REPORT AUTHORING 'denied', not an approval")


def test_a_sidecar_without_report_authoring_is_not_an_approval(project):
    _, doc = _fallback(project)
    _rewrite_sidecar(project, analysis_review=sidecar.AnalysisReview("accepted"))
    (problem,) = validate.problems(doc, project)
    assert problem.endswith("has no REPORT AUTHORING block, not an approval")


def test_a_forged_sidecar_is_a_problem(project):
    _, doc = _fallback(project)
    (project / reportfix.FALLBACK_SIDECAR).write_text("## REPORT AUTHORING\n- status: approved\n", encoding="utf-8")
    (problem,) = validate.problems(doc, project)
    assert problem.startswith("$.header.leadAuthoredFallback.approvalSidecar:") and "not a readable sidecar" in problem


def test_an_approval_sidecar_changed_outside_okstra_is_a_problem(project):
    _, doc = _fallback(project)
    path = project / reportfix.FALLBACK_SIDECAR
    path.write_text(path.read_text(encoding="utf-8").replace('"approved"', '"denied"').replace('"denied"', '"approved"', 1))
    path.write_text(path.read_text(encoding="utf-8").replace("hit the rate limit twice", "said so"))
    (problem,) = validate.problems(doc, project)
    assert "not a readable sidecar" in problem and "changed outside okstra" in problem


def test_the_sidecar_must_belong_to_the_run(project):
    _, doc = _fallback(project)
    other = project / "notes" / "approval.md"
    other.parent.mkdir()
    other.write_bytes((project / reportfix.FALLBACK_SIDECAR).read_bytes())
    doc["header"]["leadAuthoredFallback"]["approvalSidecar"] = "notes/approval.md"
    assert validate.problems(doc, project) == [
        "$.header.leadAuthoredFallback.approvalSidecar: 'notes/approval.md' is not a user-response sidecar of run 'feature--rate-limit--r002'"
    ]


@pytest.mark.parametrize(
    "hostile", ["../../etc/passwd.md", "/etc/x.md", ".okstra/runs/feature--rate-limit--r002/../../../../x.md"]
)
def test_a_sidecar_path_outside_the_project_is_refused(project, hostile):
    _, doc = _fallback(project)
    doc["header"]["leadAuthoredFallback"]["approvalSidecar"] = hostile
    with pytest.raises(PathEscapeError):
        validate.problems(doc, project)


def test_the_check_reads_the_reason_through_the_team_state_model(project):
    data, doc = _fallback(project)
    state = team_state.load(project / reportfix.FALLBACK_TEAM_STATE)
    recorded = state.find("report-writer", 2).reason
    assert doc["header"]["leadAuthoredFallback"]["dispatchFailureReason"] == recorded
    # A reason recorded later (e.g. by a reclaim) changes the answer.
    team_state.update_dispatch(project / reportfix.FALLBACK_TEAM_STATE, "report-writer", 2, lambda d: d.evolve(reason="killed"))
    assert validate.problems(doc, project)[0].startswith("$.header.leadAuthoredFallback.dispatchFailureReason")
    assert fsio.read_json(data)["header"]["leadAuthoredFallback"]["dispatchFailureReason"] == recorded
