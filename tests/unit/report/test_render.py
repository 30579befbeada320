"""render-final-report: Markdown rendering, atomic output, the last-valid copy, exit codes."""

from __future__ import annotations

import json
import os

import pytest

from conftest import tree_snapshot
from fixtures.reports import reportfix
from okstra.commands import render_final_report
from okstra.core.errors import InputError, PathEscapeError, ProblemsFound
from okstra.model import layout as run_layout
from okstra.report import render


def _place(project, task_type="analysis", name=None, document=None):
    name = name or f"reports/{task_type}.data.json"
    if document is not None:
        return reportfix.place(project, name, document)
    return reportfix.place(project, name, source=reportfix.HERE / f"{task_type}.data.json")


@pytest.mark.parametrize("task_type", reportfix.TASK_TYPES)
def test_every_example_renders_beside_its_data(project, task_type):
    data = _place(project, task_type)
    done = render.render_final_report(project, str(data))
    assert done.output == project / "reports" / f"{task_type}.md"
    text = done.output.read_text(encoding="utf-8")
    doc = reportfix.example(task_type)
    assert text.startswith(f"# Final report: {task_type} — feature/rate-limit (report {doc['header']['reportNumber']:03d})\n")
    for finding in doc["findings"]:
        assert f"### {finding['id']}. {finding['title']}" in text
    for participant in doc["participants"]:
        assert f"| {participant['provider']} | {participant['role']} |" in text
    assert "Lead-authored fallback" not in text
    assert text.endswith("\n") and not text.endswith("\n\n\n")


def test_the_stage_map_table_has_the_columns_stage_map_reads(project):
    text = render.render_final_report(project, str(_place(project, "implementation-planning"))).output.read_text()
    assert "## Stage Map\n\n| Stage | Title | Depends On | Steps | Exit Contract |\n|---|---|---|---|---|\n" in text
    assert "| 3 | Metrics and operator docs | 1, 2 | 2 | rate_limited_total exported; docs/ops.md updated |" in text


def test_usage_the_provider_did_not_report_shows_as_a_dash(project):
    text = render.render_final_report(project, str(_place(project, "verification"))).output.read_text()
    assert "| Grok | verifier | Grok 4 | `grok-4` | — | — | — | — |" in text


def test_the_lead_authored_fallback_says_why_in_one_header_line(project):
    data = reportfix.place_fallback(project)
    text = render.render_final_report(project, str(data)).output.read_text(encoding="utf-8")
    notes = [line for line in text.splitlines() if "Lead-authored fallback" in line]
    assert len(notes) == 1
    assert notes[0].startswith("| Lead-authored fallback | report-writer dispatch failed — `no result after 900 s")
    assert notes[0].endswith(f"; permitted by the user in `{reportfix.FALLBACK_SIDECAR}` |")
    # Between Report author and Lead model, as the original tool's header has it.
    assert text.index("| Report author |") < text.index(notes[0]) < text.index("| Lead model |")


def test_table_cells_cannot_break_the_table_and_quotes_cannot_close_their_fence(project):
    doc = reportfix.example("verification")
    doc["verificationResults"][0]["detail"] = "a | b\nsecond line"
    doc["findings"][0]["evidence"][0]["quote"] = "```\n## not a heading\n````"
    text = render.render_final_report(project, str(_place(project, document=doc))).output.read_text()
    assert "| V1 | 429 with Retry-After after the limit | passed | a \\| b second line |" in text
    assert "  `````text\n  ```\n  ## not a heading\n  ````\n  `````" in text


def test_a_template_with_an_undefined_value_is_an_error_not_an_empty_string():
    import jinja2

    env = render.environment()
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ report.header.nope }}").render(report={"header": {}})


def test_the_environment_is_built_once_per_process():
    assert render.environment() is render.environment()


def test_output_option_and_default_names():
    from pathlib import Path

    assert run_layout.markdown_of(Path("/p/r/final-report-analysis-001.data.json")) == Path("/p/r/final-report-analysis-001.md")
    assert run_layout.markdown_of(Path("/p/r/plain.json")) == Path("/p/r/plain.md")
    assert render.last_valid_path(Path("/p/x.data.json")) == Path("/p/x.data.json.last-valid")


# ---------------------------------------------------------------- last-valid


def test_a_good_render_keeps_an_exact_copy_of_the_input(project):
    data = _place(project)
    data.write_bytes(data.read_bytes().replace(b"\n", b"\r\n"))  # any bytes, copied as they are
    done = render.render_final_report(project, str(data))
    assert done.last_valid == data.with_name(data.name + ".last-valid")
    assert done.last_valid.read_bytes() == data.read_bytes()


def test_a_bad_edit_leaves_the_last_valid_copy_and_the_old_output_alone(project):
    data = _place(project)
    render.render_final_report(project, str(data))
    before = tree_snapshot(project / "reports")
    doc = json.loads(data.read_text())
    doc["findings"][0]["severity"] = "severe"
    data.write_text(json.dumps(doc))
    with pytest.raises(ProblemsFound) as caught:
        render.render_final_report(project, str(data))
    assert caught.value.problems == [
        "$.findings[0].severity: 'severe' is not one of ['critical', 'high', 'medium', 'low', 'info']"
    ]
    after = tree_snapshot(project / "reports")
    assert {k: v for k, v in after.items() if k != "analysis.data.json"} == {
        k: v for k, v in before.items() if k != "analysis.data.json"
    }
    assert json.loads(after["analysis.data.json.last-valid"]) == reportfix.example("analysis")


def test_malformed_json_writes_nothing(project):
    data = _place(project)
    data.write_text('{"schemaVersion": "2.0",', encoding="utf-8")
    before = tree_snapshot(project)
    with pytest.raises(InputError):
        render.render_final_report(project, str(data))
    assert tree_snapshot(project) == before


@pytest.mark.parametrize("kind", ["folder", "missing", "below a file"])
def test_unreadable_report_data_is_one_line_and_exit_2(project, capsys, kind):
    data = project / "reports" / "analysis.data.json"
    if kind == "folder":
        data.mkdir(parents=True)
    elif kind == "below a file":
        data.parent.mkdir(parents=True)
        data.parent.with_name("plain").write_text("x")
        data = data.parent.with_name("plain") / "analysis.data.json"
    before = tree_snapshot(project)
    assert render_final_report.main([str(data)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"render-final-report: {data}: ")
    assert "; " in err and "Traceback" not in err
    assert tree_snapshot(project) == before


def test_failing_to_write_the_copy_warns_and_still_renders(project, capsys):
    data = _place(project)
    (project / "reports" / "analysis.data.json.last-valid").mkdir()  # a folder where the copy must go
    code = render_final_report.main([str(data)])
    err = capsys.readouterr().err
    assert code == 0
    assert (project / "reports" / "analysis.md").is_file()
    assert err.startswith("render-final-report: warning: could not keep analysis.data.json.last-valid")
    assert err.count("\n") == 1


RUN_REPORTS = ".okstra/runs/feature--rate-limit--r001/reports"


def test_no_snapshot_writes_nothing_beside_the_input(project):
    data = _place(project, name=f"{RUN_REPORTS}/final-report-analysis-001.data.json")
    out = data.parent / "elsewhere" / "report.md"
    before = tree_snapshot(project / RUN_REPORTS)
    done = render.render_final_report(project, str(data), str(out), snapshot=False)
    assert done.last_valid is None and out.is_file()
    out.unlink()
    out.parent.rmdir()
    assert tree_snapshot(project / RUN_REPORTS) == before


def test_the_output_is_written_atomically_without_temporary_leftovers(project):
    data = _place(project)
    render.render_final_report(project, str(data))
    assert sorted(os.listdir(project / "reports")) == ["analysis.data.json", "analysis.data.json.last-valid", "analysis.md"]


# ---------------------------------------------------------------- paths and the command


@pytest.mark.parametrize("hostile", ["../outside.md", "/tmp/okstra-escape.md"])
def test_an_output_outside_the_project_is_refused_and_nothing_is_written(project, hostile):
    data = _place(project)
    before = tree_snapshot(project)
    with pytest.raises(PathEscapeError):
        render.render_final_report(project, str(data), hostile)
    assert tree_snapshot(project) == before
    assert not (project.parent / "outside.md").exists()


def test_data_outside_the_project_is_refused(project, tmp_path):
    outside = tmp_path / "outside.data.json"
    outside.write_text(json.dumps(reportfix.example("analysis")))
    with pytest.raises(PathEscapeError):
        render.render_final_report(project, str(outside))


# Targets a confused deputy would overwrite (DESIGN §14): sidecars, state, the data, the project.
DEPUTY_TARGETS = [
    f"{RUN_REPORTS}/user-responses/user-response-analysis-001.md",
    ".okstra/active-run.json",
    ".okstra/runs/feature--rate-limit--r001/team-state.json",
    ".okstra/runs/feature--rate-limit--r001/results/claude.md",
    ".okstra/config.md",
    f"{RUN_REPORTS}/final-report-analysis-001.data.json",
    f"{RUN_REPORTS}/final-report-analysis-001.data.json.last-valid",
    "src/app.md",
    "CLAUDE.md",
]


def _run_report(project):
    data = _place(project, name=f"{RUN_REPORTS}/final-report-analysis-001.data.json")
    sidecar = project / RUN_REPORTS / "user-responses" / "user-response-analysis-001.md"
    sidecar.parent.mkdir(parents=True)
    sidecar.write_text("the user's answers\n")
    return data


@pytest.mark.parametrize("target", DEPUTY_TARGETS)
def test_an_output_onto_a_sidecar_a_state_file_or_outside_the_runs_reports_is_refused(project, target):
    data = _run_report(project)
    before = tree_snapshot(project)
    with pytest.raises(InputError):
        render.render_final_report(project, str(data), target)
    assert tree_snapshot(project) == before


def test_the_command_refuses_an_output_onto_a_sidecar_with_one_line(project, capsys):
    data = _run_report(project)
    before = tree_snapshot(project)
    assert render_final_report.main([str(data), "--output", DEPUTY_TARGETS[0]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "which only okstra's own writers change" in err
    assert tree_snapshot(project) == before


def test_an_output_inside_the_runs_reports_folder_is_written(project):
    data = _run_report(project)
    done = render.render_final_report(project, str(data), f"{RUN_REPORTS}/copy.md", snapshot=False)
    assert done.output.read_text().startswith("# Final report: analysis")


def test_a_report_outside_a_run_renders_only_beside_its_data(project):
    data = _place(project)
    before = tree_snapshot(project)
    for target in ("reports/other.md", "reports/analysis.md", str(data)):
        with pytest.raises(InputError, match="not in a run's reports folder"):
            render.render_final_report(project, str(data), target)
    assert tree_snapshot(project) == before
    assert render.render_final_report(project, str(data)).output == project / "reports" / "analysis.md"


def test_report_data_elsewhere_in_okstra_is_not_rendered(project):
    data = _place(project, name=".okstra/runs/feature--rate-limit--r001/final-report-analysis-001.data.json")
    before = tree_snapshot(project)
    with pytest.raises(InputError, match="not in a run's reports folder"):
        render.render_final_report(project, str(data))
    assert tree_snapshot(project) == before


def test_main_exit_codes_and_json(project, capsys):
    good = _place(project)
    assert render_final_report.main([str(good), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {
        "data": "reports/analysis.data.json",
        "output": "reports/analysis.md",
        "lastValid": "reports/analysis.data.json.last-valid",
        "problems": [],
    }
    bad = reportfix.place(project, "b/x.data.json", source=reportfix.BROKEN / "bad-severity.data.json")
    assert render_final_report.main([str(bad), "--json"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["problems"] == [
        "$.findings[1].severity: 'severe' is not one of ['critical', 'high', 'medium', 'low', 'info']"
    ]
    assert captured.err.startswith("render-final-report: $.findings[1].severity")
    assert render_final_report.main(["missing.data.json"]) == 2
    assert render_final_report.main([]) == 2


def test_the_large_generated_report_validates_and_renders_every_finding(project):
    from fixtures.reports import make_large

    data = make_large.write(project / "large.data.json")
    assert 1_900_000 < data.stat().st_size < 3_000_000
    text = render.render_final_report(project, str(data), snapshot=False).output.read_text(encoding="utf-8")
    assert text.count("\n### F") == make_large.FINDINGS
    assert "### F1000. " in text
