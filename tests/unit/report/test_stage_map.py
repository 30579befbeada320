"""The Stage Map reader (DESIGN §7): Markdown table cells survive hostile text, every row
is checked, all problems come at once naming file, row and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okstra.commands import stage_map as stage_map_cmd
from okstra.core.errors import InputError, ProblemsFound
from okstra.report import render
from okstra.report import stage_map as sm

PLANNING = Path(__file__).resolve().parents[2] / "fixtures" / "reports" / "implementation-planning.data.json"

_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
cell_text = (
    st.lists(
        st.one_of(
            st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters=_LINE_BREAKS), max_size=5),
            st.sampled_from(["|", "\\", "\\|", "||", "\\\\|", "`", "#", "<b>", "é", "😀"]),
        ),
        min_size=1,
        max_size=8,
    )
    .map("".join)
    .map(str.strip)
    .filter(bool)
)


@settings(max_examples=300, deadline=None)
@given(st.lists(cell_text, min_size=1, max_size=6))
def test_any_cells_survive_the_report_templates_escaping_and_splitting(cells):
    line = "| " + " | ".join(render.md_cell(c) for c in cells) + " |"
    assert sm.split_row(line) == [render.oneline(c) for c in cells]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(cell_text, cell_text, st.integers(1, 99)), min_size=1, max_size=6))
def test_the_report_templates_stage_map_reads_back_as_the_same_rows(tmp_path_factory, rows):
    """The real writer: final-report.md.j2 renders the plan; the reader gets every row back."""
    document = json.loads(PLANNING.read_text(encoding="utf-8"))
    document["implementationPlanning"]["stageMap"] = [
        {
            "stage": i,
            "title": title,
            "dependsOn": ", ".join(map(str, range(1, i))) if i % 2 and i > 1 else "none",
            "stepCount": steps,
            "exitContractSummary": summary,
        }
        for i, (title, summary, steps) in enumerate(rows, 1)
    ]
    plan = tmp_path_factory.mktemp("p") / "plan.md"
    plan.write_text(render.render_markdown(document), encoding="utf-8")
    loaded = sm.load(plan)
    assert loaded.origin == "markdown"
    assert loaded.rows == tuple(
        sm.StageRow(i, render.oneline(title), tuple(range(1, i)) if i % 2 else (), steps, render.oneline(summary))
        for i, (title, summary, steps) in enumerate(rows, 1)
    )


@given(st.text(max_size=40))
def test_split_row_never_crashes(line):
    sm.split_row(line)


def _plan(tmp_path, rows: str, header: str = "| Stage | Title | Depends On | Steps | Exit Contract |"):
    plan = tmp_path / "plan.md"
    plan.write_text(f"# Plan\n\n## Stage Map\n\n{header}\n|---|---|---|---|---|\n{rows}", encoding="utf-8")
    return plan


def test_a_valid_markdown_table_gives_typed_rows_and_an_order(tmp_path):
    smap = sm.load(
        _plan(tmp_path, "| 1 | Core | none | 3 | tests pass |\n| 2 | Wire | 1 | 2 | 429s |\n| 3 | Docs | 1 | 1 | docs |\n")
    )
    assert smap.row(2) == sm.StageRow(2, "Wire", (1,), 2, "429s")
    assert smap.order() == [1, 2, 3]


def test_every_problem_is_reported_at_once_naming_file_row_and_field(tmp_path):
    plan = _plan(
        tmp_path,
        "| 1 | Core | none | 3 | ok |\n| 2 |  | 3 | x | ok |\n| 4 | T | 1, 1 | 1 | y |\n| 5 | T | 1 | 1 | y | extra |\n| 0 | Z | 9 | 1 | z |\n",
    )
    with pytest.raises(ProblemsFound) as err:
        sm.load(plan)
    problems = "\n".join(err.value.problems)
    assert f"{plan}:8: row 2: title: must be non-empty text" in problems
    assert f"{plan}:8: row 2: stepCount: 'x' is not a positive whole number" in problems
    assert f"{plan}:8: row 2: dependsOn: stage 3 is not an earlier stage" in problems
    assert f"{plan}:9: row 3: dependsOn: '1, 1' names a stage twice" in problems
    assert f"{plan}:10: row 4: expected 5 cells, found 6" in problems
    assert f"{plan}:11: row 5: stage: '0' is not a positive whole number" in problems


@pytest.mark.parametrize(
    ("rows", "words"),
    [
        ("| 1 | A | none | 1 | a |\n| 3 | B | 1 | 1 | b |\n", "without gaps; missing 2"),
        ("| 1 | A | none | 1 | a |\n| 1 | B | none | 1 | b |\n", "stage: 1 appears twice"),
        ("| 1 | A | 1 | 1 | a |\n", "depends on itself"),
        ("| 1 | A | 2 | 1 | a |\n| 2 | B | 1 | 1 | b |\n", "stage 2 is not an earlier stage"),
        ("| 1 | A | one | 1 | a |\n", "must be 'none' or comma-separated"),
        ("| 1.5 | A | none | 1 | a |\n", "stage: '1.5'"),
        ("| -1 | A | none | 1 | a |\n", "stage: '-1'"),
        ("| 1 | A | none | ١ | a |\n", "stepCount"),
        ("", "no rows"),
    ],
)
def test_bad_rows_are_problems(tmp_path, rows, words):
    with pytest.raises(ProblemsFound) as err:
        sm.load(_plan(tmp_path, rows))
    assert any(words in p for p in err.value.problems), err.value.problems


def test_wrong_columns_or_no_heading_are_problems(tmp_path):
    with pytest.raises(ProblemsFound, match="problem"):
        sm.load(_plan(tmp_path, "| 1 | A | none | 1 | a |\n", header="| Stage | Name | Deps | Steps | Exit |"))
    plan = tmp_path / "other.md"
    plan.write_text("# Plan\n\nNo map here.\n", encoding="utf-8")
    with pytest.raises(ProblemsFound) as err:
        sm.load(plan)
    assert "no '## Stage Map' heading" in err.value.problems[0]


def _data(tmp_path, stage_map, version="2.0"):
    (tmp_path / "plan.md").write_text("# Plan\n", encoding="utf-8")
    (tmp_path / "plan.data.json").write_text(
        json.dumps({"schemaVersion": version, "implementationPlanning": {"stageMap": stage_map}}), encoding="utf-8"
    )
    return tmp_path / "plan.md"


def test_the_data_file_beside_the_plan_wins_and_carries_planned_paths(tmp_path):
    plan = _data(
        tmp_path,
        [
            {
                "stage": 1,
                "title": "Core",
                "dependsOn": "none",
                "stepCount": 2,
                "exitContractSummary": "ok",
                "plannedPaths": ["src/**/*.py"],
            },
            {"stage": 2, "title": "Docs", "dependsOn": "1", "stepCount": 1, "exitContractSummary": "ok"},
        ],
    )
    smap = sm.load(plan)
    assert smap.origin == "data" and smap.source == tmp_path / "plan.data.json"
    assert smap.row(1).planned_paths == ("src/**/*.py",)


def test_data_rows_are_checked_with_json_paths(tmp_path):
    plan = _data(
        tmp_path,
        [
            {"stage": "1", "title": "", "dependsOn": "none", "stepCount": 0, "exitContractSummary": "ok", "plannedPaths": "src"},
            {"stage": True, "title": "B", "dependsOn": 1, "stepCount": 1, "exitContractSummary": "x\ny", "extra": 1},
        ],
    )
    with pytest.raises(ProblemsFound) as err:
        sm.load(plan)
    problems = "\n".join(err.value.problems)
    for words in (
        "stageMap[0] (row 1): stage: '1' is not a positive whole number",
        "stageMap[0] (row 1): title: must be non-empty text",
        "stageMap[0] (row 1): stepCount",
        "stageMap[0] (row 1): plannedPaths",
        "stageMap[1] (row 2): unknown field(s) extra",
        "stageMap[1] (row 2): stage: 'True'",
        "stageMap[1] (row 2): dependsOn",
        "stageMap[1] (row 2): exitContractSummary: must be one line",
    ):
        assert words in problems


def test_a_data_file_of_another_version_falls_back_to_the_plans_markdown_table(tmp_path):
    plan = _data(tmp_path, [], version="1.0")
    plan.write_text(
        "# Plan\n\n## Stage Map\n\n| Stage | Title | Depends On | Steps | Exit Contract |\n|---|---|---|---|---|\n"
        "| 1 | Core | none | 3 | tests pass |\n",
        encoding="utf-8",
    )
    smap = sm.load(plan)
    assert (smap.origin, smap.row(1).title) == ("markdown", "Core")
    with pytest.raises(InputError, match="schemaVersion"):  # named directly, it is still checked
        sm.load(tmp_path / "plan.data.json")


def test_an_unreadable_data_file_is_an_input_error(tmp_path):
    _data(tmp_path, [])
    (tmp_path / "plan.data.json").write_text("{nope", encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON at line 1"):
        sm.load(tmp_path / "plan.md")
    with pytest.raises(InputError, match="no such plan"):
        sm.load(tmp_path / "missing.md")


def test_the_command_exits_1_for_problems_and_2_for_unreadable(project, capsys):
    (project / "plan.md").write_text(
        "# Plan\n\n## Stage Map\n\n| Stage | Title | Depends On | Steps | Exit Contract |\n|---|---|---|---|---|\n| 2 | A | none | 1 | a |\n",
        encoding="utf-8",
    )
    assert stage_map_cmd.main(["plan.md"]) == 1
    assert "plan.md: stage numbers must run 1..1 without gaps; missing 1" in capsys.readouterr().err
    assert stage_map_cmd.main(["nope.md"]) == 2
    assert stage_map_cmd.main(["/etc/hostname"]) == 2
    assert "outside the project" in capsys.readouterr().err
