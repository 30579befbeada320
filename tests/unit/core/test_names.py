"""core.names: the names of okstra's files in a project, defined once (DESIGN §2, §8)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from okstra.core import names
from okstra.model.layout import data_of, for_project, markdown_of

LIB = Path(names.__file__).resolve().parents[2]


def test_a_report_stem_names_the_task_type_and_the_report_number_in_three_digits():
    assert names.report_stem("analysis", 7) == "final-report-analysis-007"
    assert names.report_stem("implementation-planning", 42) == "final-report-implementation-planning-042"


def test_a_report_number_past_999_keeps_all_its_digits():
    assert names.report_stem("verification", 1234) == "final-report-verification-1234"


def test_the_sidecar_of_a_report_is_named_after_its_stem():
    assert names.sidecar_name("final-report-analysis-007") == "user-response-analysis-007.md"
    assert names.sidecar_name(names.report_stem("release-handoff", 3)) == "user-response-release-handoff-003.md"


def test_a_report_pair_is_the_stem_with_the_markdown_and_the_data_suffix():
    stem = names.report_stem("analysis", 1)
    md = Path("r") / f"{stem}{names.MARKDOWN_SUFFIX}"
    data = Path("r") / f"{stem}{names.DATA_SUFFIX}"
    assert (md.name, data.name) == ("final-report-analysis-001.md", "final-report-analysis-001.data.json")
    assert data_of(md) == data and markdown_of(data) == md


def test_the_layout_builds_every_project_path_from_these_names(tmp_path):
    project = for_project(tmp_path)
    run = project.run("feature--x--r002")
    assert project.okstra_dir == tmp_path / ".okstra"
    assert run.dir == tmp_path / ".okstra" / "runs" / "feature--x--r002"
    assert run.reports_dir == run.dir / "reports"
    assert run.report_markdown("analysis", 5) == run.reports_dir / "final-report-analysis-005.md"
    assert run.report_data("analysis", 5) == run.reports_dir / "final-report-analysis-005.data.json"
    assert run.sidecar("analysis", 5) == run.reports_dir / "user-responses" / "user-response-analysis-005.md"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("OKSTRA_DIR", ".okstra"),
        ("RUNS_DIR", "runs"),
        ("REPORTS_DIR", "reports"),
        ("RESPONSES_DIR", "user-responses"),
        ("MARKDOWN_SUFFIX", ".md"),
        ("DATA_SUFFIX", ".data.json"),
        ("REPORT_PREFIX", "final-report-"),
        ("SIDECAR_PREFIX", "user-response-"),
    ],
)
def test_each_name_is_the_one_documented(name, value):
    assert getattr(names, name) == value


def test_importing_the_names_loads_no_other_module():
    # The write-guard's hot path reads these without paying for pathlib (DESIGN §13).
    code = "import sys; before = set(sys.modules); import okstra.core.names; print(sorted(m for m in set(sys.modules) - before))"
    out = subprocess.run(
        [sys.executable, "-S", "-c", code], env={"PYTHONPATH": str(LIB)}, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['okstra', 'okstra.core', 'okstra.core.names']"
