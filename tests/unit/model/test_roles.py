"""The one role table (DESIGN §3): every place that names roles reads it."""

from __future__ import annotations

import json
from pathlib import Path

from okstra.model import roles
from okstra.model.run_manifest import TASK_TYPES

REPO = Path(__file__).resolve().parents[3]


def test_each_role_has_one_row_and_a_round():
    assert len(roles.BY_NAME) == len(roles.TABLE) == len(roles.ROLES)
    assert len({r.round for r in roles.TABLE}) == len(roles.TABLE)


def test_a_role_with_its_own_template_has_that_template_and_every_task_type_has_one():
    prompts = REPO / "templates" / "prompts"
    for role in roles.TABLE:
        assert (prompts / f"{role.name}.md.j2").exists() == role.own_template, role.name
    for task_type in TASK_TYPES:
        assert (prompts / f"{task_type}.md.j2").exists(), task_type
        assert set(roles.TASK_ROLES[task_type]) <= set(roles.ROLES)


def test_the_manifest_schema_knows_exactly_the_table_s_roles():
    schema = json.loads((REPO / "schemas" / "run-manifest.schema.json").read_text(encoding="utf-8"))
    enums = [node["enum"] for node in _walk(schema) if isinstance(node, dict) and "leader" in node.get("enum", [])]
    assert enums and all(sorted(e) == sorted(roles.ROLES) for e in enums)


def _walk(node):
    yield node
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    for child in children:
        yield from _walk(child)


def test_write_scope_no_role_is_the_lead_only_the_implementer_writes_a_stage():
    assert roles.write_scope("") == roles.SCOPE_LEAD
    assert roles.write_scope("leader") == roles.SCOPE_LEAD
    assert [r.name for r in roles.TABLE if r.write_scope == roles.SCOPE_STAGE] == ["implementer"]
    assert roles.write_scope("executor") == roles.SCOPE_RESULT  # not a role: its own result only
    assert roles.write_scope("verifier") == roles.SCOPE_RESULT
