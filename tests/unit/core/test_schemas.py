"""core.schemas: JSON Schemas (2020-12), every violation as `<json path>: <message>`, state refused with exit 2.

Our schemas are valid 2020-12 schemas (checked here, not at run time), and the compiled yes/no
check gives jsonschema's own verdict on valid documents of every schema and on mutations of
them (DESIGN §13: the check is what keeps render-final-report fast)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from fixtures.reports import make_large
from fixtures.runs import make_run
from okstra.core import cli, fsio, memo, schemas
from okstra.core.errors import StateError
from okstra.harness import settings_merge
from okstra.run import catalog

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


REPO = Path(__file__).resolve().parents[3]
REPORTS = REPO / "tests" / "fixtures" / "reports"
NAMES = sorted(p.name.removesuffix(".schema.json") for p in schemas.SCHEMA_DIR.glob("*.schema.json"))


@pytest.mark.parametrize("name", NAMES)
def test_every_schema_of_ours_is_a_valid_2020_12_schema(name):
    schema = json.loads(schemas.path_of(name).read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_every_schema_of_ours_gets_the_compiled_check():
    # A schema the check cannot walk is still validated (by jsonschema alone), only slowly.
    assert [name for name in NAMES if schemas._check(name) is None] == []


def _seeds(tmp_path: Path) -> dict[str, list[Any]]:
    """Documents of every schema, valid ones and (for reports) the broken fixtures."""
    project = tmp_path / "project"
    project.mkdir()
    layout, _ = make_run(project, workers=["claude", "codex", {"provider": "kimi", "role": "critic"}], activate=True)
    reports = sorted(REPORTS.glob("*.data.json")) + sorted(REPORTS.glob("*/*.data.json"))
    return {
        "final-report-v2.0": [json.loads(p.read_text(encoding="utf-8")) for p in reports] + [make_large.build(3)],
        "run-manifest": [fsio.read_json(layout.manifest)],
        "team-state": [fsio.read_json(layout.team_state)],
        "active-run": [fsio.read_json(project / ".okstra" / "active-run.json")],
        "provider-catalog": [catalog.builtin_document()],
        "claude-plugin": [json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())],
        "claude-marketplace": [json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())],
        "claude-hooks": [
            json.loads((REPO / "hooks" / "hooks.json").read_text()),
            {"hooks": settings_merge.fragment(tmp_path, home=tmp_path, sandbox=True)["hooks"]},
        ],
        "watchers": [
            {"schemaVersion": "1.0", "watchers": []},
            {
                "schemaVersion": "1.0",
                "watchers": [
                    {"watcherId": "watcher-1", "paneId": "%3", "pid": 42, "startedAt": "2026-01-02T03:04:05Z", "workers": ["a"]},
                    {"watcherId": "watcher-2", "paneId": "%4", "pid": None, "startedAt": "2026-01-02T03:04:05Z", "workers": []},
                ],
            },
        ],
        "config": [
            {},
            {
                "default-workers": "claude,codex",
                "default-executor": "claude",
                "backend": "tmux-pane",
                "report-language": "en-GB",
                "pr-template-path": "docs/pr.md",
                "allowed-commands": {"all": ["make test"], "stage-2": ["npm test"]},
                "providers": {"kimi": None, "codex": {"defaultModel": "gpt-5"}},
                "budget-usd": "12.50",
                "failover": {"analyst": ["claude", "codex"]},
            },
        ],
    }


def test_the_seed_documents_cover_every_schema_and_are_mostly_valid(tmp_path):
    seeds = _seeds(tmp_path)
    assert sorted(seeds) == NAMES
    for name, docs in seeds.items():
        valid = [doc for doc in docs if schemas.validator(name).is_valid(doc)]
        assert valid, f"no valid {name} seed: the mutations below would start from nothing"


# Values that sit on the edges of the keywords our schemas use: types (bool is not an
# integer, 1.0 is), blank and one-line text (\x1c is whitespace to Python), anchors
# ($ before a final newline), formats, enums and ids.
EDGES = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    2.5,
    "",
    " ",
    "\x1c",
    "x",
    "x\n",
    "a\x00b",
    "F1",
    "F0",
    "F1\n",
    "2026-01-02T03:04:05Z",
    "2026-13-02T03:04:05Z",
    "10-24",
    "analysis",
    "release-handoff",
    "Okstra lead",
    "choice",
    "claude",
    "../up",
    [],
    [1],
    ["x", "x"],
    {},
    {"x": 1},
]


def _places(doc: Any, path: tuple = ()) -> list[tuple]:
    found = [path]
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += _places(value, (*path, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found += _places(value, (*path, index))
    return found


def _leaves(doc: Any) -> list[Any]:
    if isinstance(doc, dict):
        return [leaf for value in doc.values() for leaf in _leaves(value)]
    if isinstance(doc, list):
        return [leaf for value in doc for leaf in _leaves(value)]
    return [doc]


def _mutate(doc: Any, data: st.DataObject, pool: list[Any]) -> Any:
    places = _places(doc)
    path = data.draw(st.sampled_from(places))
    parent = None
    target = doc
    for step in path:
        parent, target = target, target[step]
    kind = data.draw(st.sampled_from(["replace", "delete", "add", "text", "grow", "empty"]))
    value = data.draw(st.sampled_from(EDGES + pool))
    if kind == "replace" and parent is not None:
        parent[path[-1]] = copy.deepcopy(value)
    elif kind == "delete" and parent is not None:
        del parent[path[-1]]
    elif kind == "add" and isinstance(target, dict):
        key = data.draw(st.sampled_from(["extra", *sorted({str(p[-1]) for p in places if p and isinstance(p[-1], str)})]))
        target[key] = copy.deepcopy(value)
    elif kind == "text" and parent is not None and isinstance(target, str):
        parent[path[-1]] = data.draw(st.sampled_from([target + "\n", " " + target, target + "\x00", target[:1], target * 2]))
    elif kind == "grow" and isinstance(target, list) and target:
        target.append(copy.deepcopy(data.draw(st.sampled_from(target))))
    elif kind == "empty" and isinstance(target, (list, dict)):
        target.clear()
    return doc


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    return _seeds(tmp_path_factory.mktemp("seeds"))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_the_compiled_check_agrees_with_jsonschema_on_mutated_documents(name, seeds, data):
    docs = seeds[name]
    pool = [leaf for doc in docs for leaf in _leaves(doc)]
    doc = copy.deepcopy(data.draw(st.sampled_from(docs)))
    for _ in range(data.draw(st.integers(min_value=0, max_value=3))):
        doc = _mutate(doc, data, pool)
    assert schemas._check(name)(doc) == schemas.validator(name).is_valid(doc)


def _full(schema: dict) -> Draft202012Validator:
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


TREE = {
    "$defs": {
        "tree": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}}},
        }
    },
    "$ref": "#/$defs/tree",
}
VALUES = [None, True, False, 0, 1, 2, 2.0, 2.5, -1, "", "a", "b", "ab", "2026-01-02T03:04:05Z", [], [1], [1, 1], [2, "a"], {}]
VALUES += [
    {"a": 1},
    {"b": 2},
    {"a": 1, "b": "x"},
    {"c": None},
    {"kids": []},
    {"kids": [{}, {"kids": [{}]}]},
    {"kids": [{"x": 1}]},
]
# Keywords our schemas do not use (or use only where the branches cannot overlap), so the
# mutations above never tell them apart: each against jsonschema on every value.
SYNTHETIC = [
    {"oneOf": [{"type": "integer"}, {"minimum": 2}]},
    {"anyOf": [{"type": "string", "minLength": 2}, {"type": "null"}]},
    {"allOf": [{"type": "number"}, {"minimum": 1}, {"exclusiveMinimum": 1}]},
    {"contains": {"const": 1}},
    {"propertyNames": {"pattern": "^a"}},
    {"not": {"type": ["null", "boolean"]}},
    {"if": {"required": ["a"]}, "then": {"required": ["b"]}, "else": {"required": ["c"]}},
    {"if": {"type": "integer"}, "then": {"minimum": 2}},
    {"then": {"type": "null"}, "else": {"type": "null"}},
    {"properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
    {"items": False},
    {"items": True, "minItems": 1, "uniqueItems": True},
    {"type": ["integer", "null"], "minimum": 1},
    {"enum": [1, "a", None]},
    {"const": False},
    {"format": "date-time"},
    {"dependentRequired": {"a": ["b"]}, "maxProperties": 1},
    {"x-expected": "ignored, as jsonschema ignores it", "description": "also ignored"},
    {"properties": {"a": False, "b": True}},
    TREE,
]


@pytest.mark.parametrize("schema", SYNTHETIC, ids=[json.dumps(s)[:60] for s in SYNTHETIC])
def test_the_compiled_check_agrees_with_jsonschema_keyword_by_keyword(schema):
    full = _full(schema)
    check = schemas._compile(full)
    assert [value for value in VALUES if check(value) != full.is_valid(value)] == []


@pytest.mark.parametrize(
    "schema",
    [
        {"patternProperties": {"^a": {"type": "integer"}}},
        {"prefixItems": [{"type": "integer"}], "items": {"type": "string"}},
        {"contains": {"type": "integer"}, "minContains": 2},
        {"$dynamicRef": "#meta"},
        {"$ref": "other.schema.json"},
        {"$ref": "#/$defs/missing"},
        {"unevaluatedProperties": False},
        {"dependentSchemas": {"a": {"required": ["b"]}}},
        {"properties": {"a": {"$id": "https://example.invalid/a", "type": "integer"}}},
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "integer"},
    ],
)
def test_a_schema_the_check_cannot_walk_is_left_to_jsonschema(schema):
    with pytest.raises(schemas._Unsupported):
        schemas._compile(_full(schema))


def test_problems_of_a_schema_without_the_check_come_from_jsonschema_alone(tmp_path, monkeypatch):
    (tmp_path / "odd.schema.json").write_text(json.dumps({"patternProperties": {"^a": {"type": "integer"}}}))
    monkeypatch.setattr(schemas, "SCHEMA_DIR", tmp_path)
    schemas.validator.cache_clear()
    schemas._check.cache_clear()
    try:
        assert schemas._check("odd") is None
        assert schemas.problems("odd", {"a": "x", "b": "y"}) == ["$.a: 'x' is not of type 'integer'"]
        assert schemas.problems("odd", {"a": 1, "b": "y"}) == []
    finally:
        schemas.validator.cache_clear()
        schemas._check.cache_clear()


def test_problems_come_from_jsonschema_when_the_check_says_no():
    report = json.loads((REPORTS / "analysis.data.json").read_text(encoding="utf-8"))
    report["findings"][0]["title"] = "two\nlines"
    del report["header"]["runId"]
    assert schemas.problems("final-report-v2.0", report) == [
        "$.findings[0].title: 'two\\nlines' is not one line of text (no line breaks), not blank",
        "$.header: 'runId' is a required property",
    ]


def _memo_schema(tmp_path, monkeypatch, schema: dict) -> Path:
    folder = tmp_path / "schemas"
    folder.mkdir(exist_ok=True)
    (folder / "memo.schema.json").write_text(json.dumps(schema))
    monkeypatch.setattr(schemas, "SCHEMA_DIR", folder)
    schemas.validator.cache_clear()
    schemas._check.cache_clear()
    return folder / "memo.schema.json"


def _memos() -> list[Path]:
    folder = Path(os.environ["OKSTRA_ROOT"]) / "cache" / "valid"
    return sorted(folder.iterdir()) if folder.exists() else []


def test_a_remembered_valid_document_is_not_checked_again(tmp_path, monkeypatch):
    _memo_schema(tmp_path, monkeypatch, {"type": "object", "required": ["a"]})
    try:
        assert schemas.problems("memo", {"a": 1}, remember=True) == []
        assert len(_memos()) == 1

        def no_check(name):
            raise AssertionError("checked again")

        monkeypatch.setattr(schemas, "_check", no_check)
        assert schemas.problems("memo", {"a": 1}, remember=True) == []
        with pytest.raises(AssertionError, match="checked again"):
            schemas.problems("memo", {"a": 2}, remember=True)  # another document: no memo
    finally:
        schemas.validator.cache_clear()


def test_an_invalid_document_leaves_no_memo_and_a_changed_schema_forgets_the_old_ones(tmp_path, monkeypatch):
    path = _memo_schema(tmp_path, monkeypatch, {"type": "object", "required": ["a"]})
    try:
        assert schemas.problems("memo", {"b": 1}, remember=True) == ["$: 'a' is a required property"]
        assert _memos() == []
        assert schemas.problems("memo", {"a": 1}, remember=True) == []
        # The same document, checked against a schema that changed since: checked again, and refused.
        path.write_text(json.dumps({"type": "object", "required": ["a", "c"]}))
        schemas.validator.cache_clear()
        schemas._check.cache_clear()
        assert schemas.problems("memo", {"a": 1}, remember=True) == ["$: 'c' is a required property"]
        assert schemas.problems("memo", {"a": 1}) == ["$: 'c' is a required property"]
    finally:
        schemas.validator.cache_clear()
        schemas._check.cache_clear()


def test_memos_are_kept_to_the_limit_and_an_unwritable_cache_only_costs_speed(tmp_path, monkeypatch):
    _memo_schema(tmp_path, monkeypatch, {"type": "object"})
    monkeypatch.setattr(memo, "LIMIT", 3)
    try:
        for n in range(5):
            assert schemas.problems("memo", {"n": n}, remember=True) == []
        assert len(_memos()) == 3
        cache = Path(os.environ["OKSTRA_ROOT"]) / "cache"
        for kept in _memos():
            kept.unlink()
        (cache / "valid").rmdir()
        (cache / "valid").write_text("a file where the folder goes")
        assert schemas.problems("memo", {"n": 9}, remember=True) == []
    finally:
        schemas.validator.cache_clear()
        schemas._check.cache_clear()
