"""core.schemas: JSON Schemas (2020-12), every violation as `<json path>: <message>`, state refused with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.runs import make_run
from okstra.core import cli, schemas
from okstra.core.errors import StateError

LIB = Path(schemas.__file__).resolve().parents[2]


@pytest.fixture
def manifest_doc(project):
    _, manifest = make_run(project, ["claude", "codex"])
    return manifest.to_dict()


def test_each_named_schema_is_a_file_of_the_schemas_folder():
    assert schemas.path_of("run-manifest") == schemas.SCHEMA_DIR / "run-manifest.schema.json"
    for name in ("run-manifest", "team-state", "active-run", "config", "watchers", "provider-catalog"):
        doc = json.loads(schemas.path_of(name).read_text(encoding="utf-8"))
        assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema", name


def test_a_valid_document_has_no_problems(manifest_doc, project):
    assert schemas.problems("run-manifest", manifest_doc) == []
    layout, _ = make_run(project, ["grok"], run_number=2, activate=False)
    state = json.loads(layout.team_state.read_text(encoding="utf-8"))
    assert schemas.problems("team-state", state) == []


def test_every_problem_is_one_line_naming_its_json_path(manifest_doc):
    manifest_doc["runNumber"] = "x"
    manifest_doc["participants"][1]["workerId"] = ""
    manifest_doc["createdAt"] = "yesterday"
    del manifest_doc["runId"]
    manifest_doc["surprise"] = 1
    assert schemas.problems("run-manifest", manifest_doc) == [
        "$: 'runId' is a required property",
        "$: Additional properties are not allowed ('surprise' was unexpected)",
        "$.createdAt: 'yesterday' is not a 'date-time'",
        "$.participants[1].workerId: '' does not match '^[a-z0-9][a-z0-9-]{0,63}$'",
        "$.runNumber: 'x' is not of type 'integer'",
    ]


def test_a_failed_pattern_says_what_the_field_expects_when_the_schema_tells():
    assert schemas.problems("claude-plugin", {"name": "Bad Name", "version": "1"}) == [
        "$.name: 'Bad Name' is not a kebab-case plugin name",
        "$.version: '1' is not a semantic version such as 1.2.3",
    ]


def test_a_document_of_the_wrong_shape_is_a_problem_not_a_crash():
    assert schemas.problems("team-state", []) == ["$: [] is not of type 'object'"]


def test_check_state_accepts_a_valid_document(manifest_doc):
    assert schemas.check_state("run-manifest", manifest_doc, "runs/x/run-manifest.json") is None


def test_check_state_refuses_naming_the_file_and_each_problem(manifest_doc):
    manifest_doc["runNumber"] = 0
    manifest_doc["terminalBackend"] = "screen"
    with pytest.raises(StateError) as refused:
        schemas.check_state("run-manifest", manifest_doc, "runs/x/run-manifest.json")
    assert str(refused.value) == (
        "runs/x/run-manifest.json: not a valid run-manifest document: "
        "$.runNumber: 0 is less than the minimum of 1; "
        "$.terminalBackend: 'screen' is not one of ['cli-wrapper', 'tmux-pane', 'cmux-pane']"
    )
    assert cli.exit_code_for(refused.value) == 2


def test_check_state_names_the_first_three_problems_and_counts_the_rest(manifest_doc):
    for key in ("runId", "taskKey", "taskType", "runNumber", "reportNumber"):
        del manifest_doc[key]
    with pytest.raises(StateError) as refused:
        schemas.check_state("run-manifest", manifest_doc, "m.json")
    message = str(refused.value)
    assert message.startswith("m.json: not a valid run-manifest document: $: ")
    assert message.count("is a required property") == 3
    assert message.endswith(" (+2 more)")
    assert "\n" not in message


def test_importing_the_module_does_not_load_jsonschema_until_a_document_is_checked():
    # Modules on the write-guard's hot path import its callers (DESIGN §13).
    code = (
        "import sys; from okstra.core import schemas; print('jsonschema' in sys.modules); "
        "schemas.problems('watchers', {}); print('jsonschema' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env={"PYTHONPATH": str(LIB)}, capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "True"]


def test_problems_in_a_list_come_in_the_order_of_its_items_not_of_their_digits(manifest_doc):
    first = manifest_doc["participants"][0]
    manifest_doc["participants"] = [dict(first, workerId=f"w{n}") for n in range(12)]
    for n in (10, 2, 11):
        manifest_doc["participants"][n]["workerId"] = "Bad"
    assert [line.split(":")[0] for line in schemas.problems("run-manifest", manifest_doc)] == [
        "$.participants[2].workerId",
        "$.participants[10].workerId",
        "$.participants[11].workerId",
    ]
