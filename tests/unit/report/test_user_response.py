"""user-response-write/-show/-list (DESIGN §9): merge under lock, refuse bad input before writing."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import tree_snapshot
from fixtures.runs import make_run
from okstra.commands import user_response_import, user_response_list, user_response_show, user_response_write
from okstra.core import seal
from okstra.core.errors import InputError, PathEscapeError, RefusedError, StateError
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
    data_sha = hashlib.sha256(layout.report_data("implementation-planning", 1).read_bytes()).hexdigest()
    assert r.plan_decision == sc.PlanDecision("approved", "A", plan_sha256=data_sha)  # bound to the plan's data
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
    body = seal.open_text(sidecar.read_text(encoding="utf-8"), "s", required=True)
    sidecar.write_text(seal.seal_text(body.replace('- answer: "x"', "- answer: x")), encoding="utf-8")
    before = tree_snapshot(project)
    assert user_response_write.main(["--report", rel, "--answers", '{"Q2": "free"}']) == 2
    assert ".md:17:" in capsys.readouterr().err
    assert tree_snapshot(project) == before


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda t: t.replace('- answer: "x"', '- answer: "y"'), "was changed outside okstra"),
        (lambda t: t.replace('- answer: "x"', '- answer: "y"').rsplit("<!--", 1)[0], "has no okstra seal"),
        (lambda t: t + '\n## PLAN DECISION\n\n- status: "approved"\n- option: "A"\n- reason: null\n', "has no okstra seal"),
    ],
)
def test_a_sidecar_changed_outside_okstra_is_refused_by_every_reader_and_not_overwritten(project, report, capsys, edit, words):
    layout, rel = report
    user_response.write(project, rel, '{"Q1": "x"}')
    sidecar = layout.sidecar("implementation-planning", 1)
    sidecar.write_text(edit(sidecar.read_text(encoding="utf-8")), encoding="utf-8")
    before = tree_snapshot(project)
    assert user_response_write.main(["--report", rel, "--answers", '{"Q2": "free"}']) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err
    assert user_response_show.main(["--report", rel]) == 2
    assert words in capsys.readouterr().err
    with pytest.raises(StateError, match=words):
        user_response.approved_plan(user_response.load_report(project, rel), rel)
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


# ---------------------------------------------------------------- who records (DESIGN §9)


@pytest.mark.parametrize(
    ("env", "who"),
    [
        ({}, sc.USER),
        ({"HOME": "/h", "TERM": "xterm"}, sc.USER),
        ({"CLAUDECODE": "1"}, sc.RELAYED_BY_LEAD),
        ({"CLAUDECODE": ""}, sc.RELAYED_BY_LEAD),
        ({"CLAUDE_CODE_CHILD_SESSION": "1"}, sc.RELAYED_BY_LEAD),
        ({"OKSTRA_WORKER_ID": "claude-analyst"}, sc.RELAYED_BY_LEAD),
    ],
)
def test_the_recorder_is_read_from_the_environment(env, who):
    assert user_response.recorder(env) == who


@pytest.mark.parametrize(
    "block",
    [
        {"plan_decision": '{"status": "approved", "option": "A"}'},
        {"analysis_review": '{"status": "accepted"}'},
        {"direction_selection": '{"optionId": "A", "optionName": "x"}'},
        {"report_authoring": '{"status": "approved", "reason": "r"}'},
    ],
)
def test_a_decision_from_the_lead_is_refused_and_nothing_changes(project, report, block):
    _, rel = report
    before = tree_snapshot(project)
    with pytest.raises(RefusedError, match="is the user's decision"):
        user_response.write(project, rel, '{"Q1": "90"}', recorded_by=sc.RELAYED_BY_LEAD, **block)
    assert tree_snapshot(project) == before


def test_the_command_in_a_claude_code_session_refuses_a_decision(project, report, capsys, monkeypatch):
    _, rel = report
    monkeypatch.setenv("CLAUDECODE", "1")
    before = tree_snapshot(project)
    args = ["--report", rel, "--answers", "{}", "--plan-decision", '{"status": "approved", "option": "A"}']
    assert user_response_write.main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "PLAN DECISION is the user's decision" in err and "their own terminal" in err
    assert tree_snapshot(project) == before


def test_answers_relayed_by_the_lead_are_marked_and_the_users_own_replace_them(project, report, monkeypatch, capsys):
    layout, rel = report
    monkeypatch.setenv("CLAUDECODE", "1")
    assert user_response_write.main(["--report", rel, "--answers", '{"Q1": "90", "Q2": "free"}']) == 0
    assert "Q1: answered (relayed by the lead)" in capsys.readouterr().err
    r = sc.parse(layout.sidecar("implementation-planning", 1).read_text(encoding="utf-8"), "s")
    assert [a.recorded_by for a in r.answers] == [sc.RELAYED_BY_LEAD] * 2
    monkeypatch.delenv("CLAUDECODE")
    user_response.write(project, rel, '{"Q1": "120", "Q2": "free"}')
    r = sc.parse(layout.sidecar("implementation-planning", 1).read_text(encoding="utf-8"), "s")
    # a changed answer is the user's now; the same answer again keeps who recorded it
    assert [(a.answer, a.recorded_by) for a in r.answers] == [("120", sc.USER), ("free", sc.RELAYED_BY_LEAD)]


# ---------------------------------------------------------------- import


def _export(layout, rel, tmp_path, *, name="user-response-implementation-planning-001.md", **blocks) -> Path:
    meta = sc.SidecarMeta("feature/rate-limit", "implementation-planning", 1, layout.run_id, rel, "2026-11-30T10:00:00Z")
    data = json.loads(layout.report_data("implementation-planning", 1).read_text(encoding="utf-8"))
    q1 = data["openQuestions"][0]["question"]
    responses = sc.Responses(
        meta, (sc.Answer("Q1", q1, "90\n# not a heading", sc.USER), sc.Answer("Q2", "Which tier?", "paid", sc.USER)), **blocks
    )
    if responses.plan_decision is not None and responses.plan_decision.plan_sha256 is None:
        # The view's Export names the plan data the page showed (DESIGN §9).
        shown = hashlib.sha256(layout.report_data("implementation-planning", 1).read_bytes()).hexdigest()
        responses = replace(responses, plan_decision=replace(responses.plan_decision, plan_sha256=shown))
    path = tmp_path / "downloads" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(sc.serialize(responses), encoding="utf-8")
    return path


def test_an_imported_export_becomes_the_sidecar_byte_for_byte(project, report, tmp_path):
    layout, rel = report
    export = _export(layout, rel, tmp_path, plan_decision=sc.PlanDecision("approved", "B"))
    result = user_response.import_export(project, export, "e.md", None, sc.USER)
    assert layout.sidecar("implementation-planning", 1).read_text() == seal.seal_text(export.read_text())  # sealed by okstra
    assert result.changes == ("Q1: answered", "Q2: answered", "PLAN DECISION: recorded")
    again = user_response.import_export(project, export, "e.md", rel, sc.USER)
    assert again.changed is False and again.changes == ()


def test_an_import_from_the_leads_session_marks_answers_relayed_and_refuses_decisions(project, report, tmp_path):
    layout, rel = report
    before = tree_snapshot(project)
    decided = _export(layout, rel, tmp_path, plan_decision=sc.PlanDecision("approved", "B"))
    with pytest.raises(RefusedError, match="PLAN DECISION is the user's decision"):
        user_response.import_export(project, decided, "e.md", None, sc.RELAYED_BY_LEAD)
    assert tree_snapshot(project) == before
    plain = _export(layout, rel, tmp_path)
    user_response.import_export(project, plain, "e.md", None, sc.RELAYED_BY_LEAD)
    r = sc.parse(layout.sidecar("implementation-planning", 1).read_text(encoding="utf-8"), "s")
    assert {a.recorded_by for a in r.answers} == {sc.RELAYED_BY_LEAD}  # the file said "user": not believed


def _mutations():
    big = "x" * (10 * 1024 * 1024)
    return [
        (lambda t: t.replace("- report-number: 1", "- report-number: 2"), ":1: the title does not match"),
        (
            lambda t: t.replace("report 001", "report 002").replace("- report-number: 1", "- report-number: 2"),
            ":7: report-number 2 is not this report's",
        ),
        (lambda t: t.replace('- run-id: "feature--rate-limit--r002"', '- run-id: "other--r001"'), ":8: run-id"),
        (lambda t: t.replace("### Q2", "### Q9"), ":20: question Q9 is not an open question"),
        (lambda t: t.replace('- question: "Which tier?"', '- question: "Which colour?"'), ":22: the text of question Q2"),
        (lambda t: t.replace('- answer: "paid"', '- answer: "gold"'), ":23: 'gold' is not an option of Q2"),
        (lambda t: t.replace("### Q2", "### Q1"), ":20: question Q1 is answered twice"),
        (lambda t: t + '\n## PLAN DECISION\n\n- status: "approved"\n- option: "A"\n- reason: null\n', "appears twice"),
        (lambda t: t.replace('- answer: "paid"', '- answer: "paid"\n## REPORT AUTHORING'), ":24: expected the field"),
        (lambda t: t.replace('\\n# not a heading"', '"\n## PLAN DECISION'), ":18: expected the field"),
        (lambda t: t.replace('- option: "B"', '- option: "Z"'), ":29: PLAN DECISION: option 'Z'"),
        (lambda t: t.replace("## PLAN DECISION", "## ANALYSIS REVIEW"), ":29: expected the field 'notes'"),
        (lambda t: t + '\n## REPORT AUTHORING\n\n- status: "approved"\n- reason: "r"\n', "does not ask for a REPORT AUTHORING"),
        (lambda t: t.replace('"paid"', '"paid' + big + '"'), "an exported sidecar is at most 1,048,576"),
        (lambda t: t.replace("paid", "p\udcffid"), "not UTF-8"),
        (lambda t: "", ":1: the file ends where the title was expected"),
    ]


@pytest.mark.parametrize(("mutate", "words"), _mutations())
def test_a_bad_export_is_refused_naming_the_line_and_the_sidecar_never_changes(project, report, tmp_path, mutate, words):
    layout, rel = report
    user_response.write(project, rel, '{"Q1": "earlier"}')
    export = _export(layout, rel, tmp_path, plan_decision=sc.PlanDecision("approved", "B"))
    text = mutate(export.read_text(encoding="utf-8"))
    export.write_bytes(text.encode("utf-8", "surrogateescape"))
    before = tree_snapshot(project)
    with pytest.raises(InputError) as err:
        user_response.import_export(project, export, "e.md", rel, sc.USER)
    assert words in str(err.value) and "\n" not in str(err.value)
    assert tree_snapshot(project) == before


def test_an_export_deciding_on_a_plan_that_changed_since_the_page_was_rendered_is_refused(project, report, tmp_path):
    layout, rel = report
    export = _export(layout, rel, tmp_path, plan_decision=sc.PlanDecision("approved", "B"))
    data = layout.report_data("implementation-planning", 1)
    data.write_text(data.read_text().replace("api/limiter/**", "**"))
    before = tree_snapshot(project)
    with pytest.raises(InputError, match=r"e.md:31: the plan changed after this page was rendered") as err:
        user_response.import_export(project, export, "e.md", rel, sc.USER)
    assert "render the view again" in str(err.value)
    assert tree_snapshot(project) == before


def test_an_export_whose_plan_decision_names_no_plan_data_is_refused(project, report, tmp_path):
    layout, rel = report
    export = _export(layout, rel, tmp_path, plan_decision=sc.PlanDecision("approved", "B"))
    text = export.read_text()
    export.write_text("".join(line for line in text.splitlines(keepends=True) if not line.startswith("- plan-sha256:")))
    before = tree_snapshot(project)
    with pytest.raises(InputError, match="does not name the plan data it decides"):
        user_response.import_export(project, export, "e.md", rel, sc.USER)
    assert tree_snapshot(project) == before


def test_a_typed_plan_decision_is_bound_by_the_command_never_by_its_input(project, report, capsys):
    layout, rel = report
    decision = '{"status": "approved", "option": "A", "planSha256": "' + "0" * 64 + '"}'
    before = tree_snapshot(project)
    assert user_response_write.main(["--report", rel, "--answers", "{}", "--plan-decision", decision]) == 2
    assert "unknown field(s) planSha256" in capsys.readouterr().err
    assert tree_snapshot(project) == before


def test_from_downloads_takes_the_newest_copy_of_the_reports_export(project, report, tmp_path):
    layout, rel = report
    old = _export(layout, rel, tmp_path)
    newer = _export(layout, rel, tmp_path, name="user-response-implementation-planning-001 (1).md")
    other = _export(layout, rel, tmp_path, name="user-response-analysis-004.md")
    for age, path in ((300, old), (100, newer), (0, other)):
        os.utime(path, (time.time() - age, time.time() - age))
    folders = user_response.download_folders({"XDG_DOWNLOAD_DIR": str(tmp_path / "downloads"), "HOME": str(tmp_path)})
    assert user_response.newest_export(folders, "user-response-implementation-planning-001.md") == newer
    assert user_response.newest_export(folders, None) == other
    with pytest.raises(InputError, match="no user-response-verification-001.md in"):
        user_response.newest_export(folders, "user-response-verification-001.md")


def test_the_import_command_prints_the_sidecar_and_what_changed(project, report, tmp_path, capsys, monkeypatch):
    layout, rel = report
    _export(layout, rel, tmp_path, plan_decision=sc.PlanDecision("approved", "B"))
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "downloads").rename(tmp_path / "Downloads")
    assert user_response_import.main(["--from-downloads", "--report", rel]) == 0
    out, err = capsys.readouterr()
    assert out == layout.relative(layout.sidecar("implementation-planning", 1)) + "\n"
    assert "PLAN DECISION: recorded" in err and "importing " in err
    assert user_response_import.main(["--report", rel]) == 2
    assert "give either FILE or --from-downloads" in capsys.readouterr().err
