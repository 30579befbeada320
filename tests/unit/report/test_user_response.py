"""user-response-write/-show/-list (DESIGN §9): merge under lock, refuse bad input before writing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import tree_snapshot
from fixtures.runs import make_run
from okstra.commands import user_response_list, user_response_show, user_response_write
from okstra.core.errors import InputError, PathEscapeError
from okstra.report import sidecar as sc
from okstra.report import user_response

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "reports" / "implementation-planning.data.json"


@pytest.fixture
def report(project):
    layout, _ = make_run(project, task_type="implementation-planning", run_number=2)
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    data["openQuestions"].append({"id": "Q2", "question": "Which tier?", "kind": "choice", "options": ["free", "paid"]})
    path = layout.report_data("implementation-planning", 1)
    path.write_text(json.dumps(data), encoding="utf-8")
    return layout, layout.relative(layout.report_markdown("implementation-planning", 1))


def test_write_creates_the_sidecar_at_the_layout_path(project, report, capsys):
    layout, rel = report
    assert user_response_write.main(["--report", rel, "--answers", '{"Q1": "120"}']) == 0
    sidecar = layout.sidecar("implementation-planning", 1)
    assert capsys.readouterr().out == layout.relative(sidecar) + "\n"
    r = sc.parse(sidecar.read_text(encoding="utf-8"), "s")
    assert r.meta.task_key == "feature/rate-limit" and r.meta.run_id == layout.run_id and r.meta.report_number == 1
    assert r.meta.source_report == rel
    assert [(a.question_id, a.answer) for a in r.answers] == [("Q1", "120")]
    assert r.answers[0].question.startswith("Default limit")


def test_write_merges_answers_and_blocks_and_keeps_the_creation_time(project, report):
    layout, rel = report
    user_response.write(project, rel, '{"Q2": "paid"}', plan_decision='{"status": "approved", "option": "a"}')
    first = sc.parse(layout.sidecar("implementation-planning", 1).read_text(encoding="utf-8"), "s")
    result = user_response.write(
        project,
        rel.replace(".md", ".data.json"),
        '[{"questionId": "Q1", "answer": "90"}]',
        report_authoring='{"status": "approved", "reason": "writer failed twice"}',
    )
    r = sc.parse(layout.sidecar("implementation-planning", 1).read_text(encoding="utf-8"), "s")
    assert [a.question_id for a in r.answers] == ["Q1", "Q2"]  # the report's order
    assert r.plan_decision == sc.PlanDecision("approved", "A")
    assert r.report_authoring.reason == "writer failed twice"
    assert r.meta.created_at == first.meta.created_at
    assert result.unanswered == () and result.blocks == ("ANSWERS", "PLAN DECISION", "REPORT AUTHORING")
    again = user_response.write(project, rel, '{"Q1": "90"}')
    assert again.changed is False


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--answers", '{"Q9": "x"}'], "known question ids: Q1, Q2"),
        (["--answers", '{"Q1": "x"'], "--answers: not valid JSON at line 1 column"),
        (["--answers", '{\n"Q1": }'], "line 2 column"),
        (["--answers", "[1]"], "--answers[0]"),
        (["--answers", '"x"'], "expected an object"),
        (["--answers", '{"Q1": 5}'], "must be a string"),
        (["--answers", '{"Q2": "gold"}'], "not an option of Q2"),
        (["--answers", '[{"questionId": "Q1", "answer": "a"}, {"questionId": "Q1", "answer": "b"}]'], "answered twice"),
        (["--answers", "{}", "--plan-decision", '{"status": "approve", "option": "A"}'], "--plan-decision: plan decision status"),
        (["--answers", "{}", "--plan-decision", '{"status": "approved", "option": "Z"}'], "options: A, B"),
        (["--answers", "{}", "--plan-decision", '{"status": "rejected"}'], "reason: required"),
        (["--answers", "{}", "--plan-decision", "[]"], "--plan-decision: expected an object"),
        (["--answers", "{}", "--analysis-review", '{"status": "fine"}'], "analysis review status"),
        (["--answers", "{}", "--direction-selection", '{"optionId": "2x", "optionName": "n"}'], "option id"),
        (["--answers", "{}", "--report-authoring", '{"status": "approved"}'], "missing field(s) reason"),
        (["--answers", "{}", "--report-authoring", '{"status": "approved", "reason": "  "}'], "must not be empty"),
        (["--answers", "{}", "--report-authoring", '{"status": "approved", "reason": "x", "by": "lead"}'], "unknown field"),
    ],
)
def test_bad_arguments_exit_2_with_one_line_and_change_nothing(project, report, capsys, args, words):
    _, rel = report
    before = tree_snapshot(project)
    assert user_response_write.main(["--report", rel, *args]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and err.startswith("user-response-write: ")
    assert tree_snapshot(project) == before


@pytest.mark.parametrize(
    "value",
    [
        "/etc/passwd",
        "../outside.md",
        "README.md",
        ".okstra/runs/x/other/r.md",
        "",
        ".okstra/runs/feature--rate-limit--r002/reports/none.md",
    ],
)
def test_bad_report_paths_are_refused(project, report, value):
    before = tree_snapshot(project)
    with pytest.raises(InputError):
        user_response.write(project, value, "{}")
    assert tree_snapshot(project) == before


def test_a_report_symlinked_outside_the_project_is_refused(project, report, tmp_path):
    layout, _ = report
    outside = tmp_path / "outside.data.json"
    shutil.copy(FIXTURE, outside)
    link = layout.reports_dir / "final-report-analysis-009.data.json"
    link.symlink_to(outside)
    with pytest.raises(PathEscapeError):
        user_response.write(project, layout.relative(layout.reports_dir) + "/final-report-analysis-009.data.json", "{}")


def test_a_report_whose_run_id_does_not_match_its_folder_is_refused(project, report):
    layout, rel = report
    path = layout.report_data("implementation-planning", 1)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["header"]["runId"] = "other--run--r001"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match="does not match the run folder"):
        user_response.write(project, rel, "{}")


def test_a_broken_sidecar_is_reported_with_its_line_and_not_overwritten(project, report, capsys):
    layout, rel = report
    user_response.write(project, rel, '{"Q1": "x"}')
    sidecar = layout.sidecar("implementation-planning", 1)
    sidecar.write_text(sidecar.read_text(encoding="utf-8").replace('- answer: "x"', "- answer: x"), encoding="utf-8")
    before = tree_snapshot(project)
    assert user_response_write.main(["--report", rel, "--answers", '{"Q2": "free"}']) == 2
    assert ".md:17:" in capsys.readouterr().err
    assert tree_snapshot(project) == before


def test_show_lists_unanswered_questions_and_answers(project, report, capsys):
    _, rel = report
    user_response.write(project, rel, '{"Q1": "120\\u001b[31m"}', direction_selection='{"optionId": "b", "optionName": "Fixed"}')
    assert user_response_show.main(["--report", rel, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [q["id"] for q in shown["unanswered"]] == ["Q2"] and shown["unanswered"][0]["options"] == ["free", "paid"]
    assert shown["answers"][0]["answer"] == "120\x1b[31m"
    assert shown["blocks"] == ["ANSWERS", "DIRECTION SELECTION"]
    assert user_response_show.main(["--report", rel]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\u001b" in out and "Q2  Which tier?" in out


def test_list_shows_each_sidecar_of_the_active_run(project, report, capsys):
    layout, rel = report
    assert user_response_list.main(["--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"runId": layout.run_id, "sidecars": []}
    user_response.write(project, rel, '{"Q1": "x"}', analysis_review='{"status": "accepted"}')
    assert user_response_list.main(["--run-manifest", layout.relative(layout.manifest), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["sidecars"]
    assert rows[0]["answered"] == ["Q1"] and rows[0]["blocks"] == ["ANSWERS", "ANALYSIS REVIEW"]


def test_list_without_an_active_run_or_manifest_exits_2(project, capsys):
    assert user_response_list.main([]) == 2
    assert "no active run" in capsys.readouterr().err


def test_list_refuses_a_manifest_outside_the_project(project, report, capsys):
    assert user_response_list.main(["--run-manifest", "/etc/hostname"]) == 2
    assert "outside the project" in capsys.readouterr().err
