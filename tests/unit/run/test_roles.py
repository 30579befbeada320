"""Role planning and roster rules (DESIGN §3): every rule and each refusal's message."""

from __future__ import annotations

import pytest

from okstra.core.errors import InputError, RefusedError
from okstra.run import catalog, roles

CAT = None


def _plan(project=None, **kw):
    global CAT
    CAT = CAT or catalog.load()
    kw.setdefault("workers", ["claude", "codex"])
    return roles.plan(roles.PlanRequest(**kw), CAT, project)


def _roles(plan):
    return [(e.role, e.worker_id, e.model_id) for e in plan.role_executions]


def test_analysis_puts_an_analyst_on_each_worker_and_the_report_writer_on_the_first():
    plan = _plan(task_type="analysis")
    assert _roles(plan) == [
        ("leader", "leader", "claude-sonnet-4-5"),
        ("analyst", "claude", "claude-sonnet-4-5"),
        ("analyst", "codex", "gpt-5-codex"),
        ("report-writer", "claude", "claude-sonnet-4-5"),
    ]
    assert [(e.worker_id, e.role) for e in plan.first_round] == [("claude", "analyst"), ("codex", "analyst")]
    assert [(a.worker_id, a.roles) for a in plan.assignments] == [
        ("claude", ("analyst", "report-writer")),
        ("codex", ("analyst",)),
    ]


@pytest.mark.parametrize(
    ("task_type", "role"), [("implementation-planning", "planner"), ("verification", "verifier"), ("release-handoff", "critic")]
)
def test_other_task_types_put_their_role_on_each_worker(task_type, role):
    plan = _plan(task_type=task_type, workers=["codex", "kimi"])
    assert [(e.worker_id, e.role) for e in plan.first_round] == [("codex", role), ("kimi", role)]
    assert plan.execution("report-writer")[0].worker_id == "codex"


def test_implementation_dispatches_the_executor_and_verifies_on_the_others():
    plan = _plan(task_type="implementation", workers=["claude", "codex", "grok"], executor="codex")
    assert [(e.worker_id, e.role) for e in plan.first_round] == [
        ("claude", "verifier"),
        ("codex", "implementer"),
        ("grok", "verifier"),
    ]
    assert plan.executor == "codex"
    assert plan.execution("report-writer")[0].worker_id == "claude"


def test_a_lone_executor_verifies_its_own_work_on_one_model():
    plan = _plan(task_type="implementation", workers=["claude"], role_models=["implementer=claude/claude-opus-4-1"])
    assert {e.model_id for e in plan.role_executions if e.worker_id == "claude"} == {"claude-opus-4-1"}
    assert plan.assignments[0].roles == ("implementer", "verifier", "report-writer")


def test_assignments_carry_the_model_id_and_the_cli_value_never_the_display_name():
    plan = _plan(task_type="analysis", workers=["antigravity", "kimi"])
    by_worker = {a.worker_id: a for a in plan.assignments}
    assert (by_worker["antigravity"].model_id, by_worker["antigravity"].cli_model) == ("gemini-3-pro", "gemini-3-pro-preview")
    assert (by_worker["kimi"].model_id, by_worker["kimi"].cli_model) == ("kimi-k2", "kimi-k2-thinking-turbo")
    executions = {(e.worker_id, e.model_id) for e in plan.role_executions}
    assert {(a.worker_id, a.model_id) for a in plan.assignments} <= executions
    displays = {p.model_display for p in plan.participants}
    assert "Kimi K2 Thinking" in displays and not {e.model_id for e in plan.role_executions} & displays


def test_the_lead_gets_a_role_execution_and_a_participant_entry():
    plan = _plan(task_type="analysis", role_models=["leader=claude/claude-opus-4-1"])
    (lead,) = plan.execution("leader")
    assert (lead.worker_id, lead.model_id, lead.runner) == ("leader", "claude-opus-4-1", "native-session")
    assert any(p.role == "leader" and p.provider_display == "Claude Code" for p in plan.participants)
    assert all(a.worker_id != "leader" for a in plan.assignments)


def test_a_report_language_adds_the_translator_with_its_own_entries():
    plan = _plan(task_type="analysis", report_language="ko")
    (translator,) = plan.execution("translator")
    assert (translator.worker_id, translator.model_id) == ("claude", "claude-sonnet-4-5")
    assert any(p.role == "translator" for p in plan.participants)
    assert plan.report_language == "ko"
    assert "translator" not in {e.role for e in plan.first_round}


def test_the_translator_may_be_a_provider_outside_the_roster():
    plan = _plan(task_type="analysis", report_language="ko", role_models=["translator=kimi/kimi-k2"])
    assert [(a.worker_id, a.roles) for a in plan.assignments][-1] == ("kimi", ("translator",))
    assert [e.worker_id for e in plan.first_round] == ["claude", "codex"]


def test_no_report_language_means_no_translator():
    assert _plan(task_type="analysis").execution("translator") == ()


def test_a_translator_without_a_report_language_is_refused():
    with pytest.raises(RefusedError, match=r"a translator needs a report language; pass --report-language LANG"):
        _plan(task_type="analysis", role_models=["translator=kimi/kimi-k2"])


def test_a_role_model_pins_a_role_on_a_roster_worker():
    plan = _plan(task_type="analysis", role_models=["analyst=codex/gpt-5"])
    assert ("analyst", "codex", "gpt-5") in _roles(plan)


def test_a_default_placed_role_follows_its_workers_pinned_model():
    plan = _plan(task_type="analysis", role_models=["analyst=claude/claude-opus-4-1"])
    assert ("report-writer", "claude", "claude-opus-4-1") in _roles(plan)


def test_a_critic_can_be_added_to_any_task_type():
    plan = _plan(task_type="analysis", role_models=["critic=codex/gpt-5-codex"])
    assert ("critic", "codex", "gpt-5-codex") in _roles(plan)
    assert {e.role for e in plan.first_round if e.worker_id == "codex"} == {"analyst"}


def test_the_report_writer_can_be_moved():
    plan = _plan(task_type="analysis", role_models=["report-writer=codex/gpt-5-codex"])
    assert [e.worker_id for e in plan.execution("report-writer")] == ["codex"]


# --- refusals ---------------------------------------------------------------


def test_refuses_an_executor_outside_the_roster_naming_the_flag_that_adds_it():
    with pytest.raises(RefusedError) as err:
        _plan(task_type="implementation", executor="grok")
    assert str(err.value) == (
        "--executor grok: the executor 'grok' is not in the roster (claude, codex, from --workers); "
        "add it with --workers claude,codex,grok"
    )


def test_refuses_an_executor_outside_the_roster_even_for_other_task_types():
    with pytest.raises(RefusedError, match="add it with --workers claude,codex,grok"):
        _plan(task_type="analysis", executor="grok")


def test_refuses_a_configured_executor_outside_the_roster_naming_its_source(monkeypatch):
    monkeypatch.setenv("OKSTRA_DEFAULT_EXECUTOR", "kimi")
    with pytest.raises(RefusedError) as err:
        _plan(task_type="implementation")
    assert str(err.value).startswith(
        "default-executor kimi (env OKSTRA_DEFAULT_EXECUTOR): the executor 'kimi' is not in the roster"
    )
    assert str(err.value).endswith("add it with --workers claude,codex,kimi or pass --executor claude")


def test_a_configured_executor_is_not_checked_for_task_types_without_one(monkeypatch):
    monkeypatch.setenv("OKSTRA_DEFAULT_EXECUTOR", "kimi")
    assert _plan(task_type="analysis").executor is None


def test_refuses_executor_and_verifier_on_one_provider_with_two_models_naming_both():
    with pytest.raises(RefusedError) as err:
        _plan(task_type="implementation", executor="claude", role_models=["verifier=claude/claude-opus-4-1"])
    assert str(err.value) == (
        "worker claude would carry two models: implementer on claude-sonnet-4-5 (--executor claude) and "
        "verifier on claude-opus-4-1 (--role-model verifier=claude/claude-opus-4-1); a worker id carries one model: "
        "pin both roles to one model (e.g. --role-model implementer=claude/claude-opus-4-1 or "
        "--role-model verifier=claude/claude-sonnet-4-5) or move the verifier to another provider"
    )


def test_two_pinned_roles_on_one_worker_with_one_model_are_fine():
    plan = _plan(
        task_type="implementation",
        executor="claude",
        role_models=["verifier=claude/claude-opus-4-1", "implementer=claude/claude-opus-4-1"],
    )
    assert {e.model_id for e in plan.role_executions if e.worker_id == "claude"} == {"claude-opus-4-1"}


def test_refuses_an_implementer_pin_that_disagrees_with_the_executor():
    with pytest.raises(
        RefusedError,
        match=r"puts the implementer on codex, but the executor is claude \(--executor claude\); pass --executor codex",
    ):
        _plan(task_type="implementation", executor="claude", role_models=["implementer=codex/gpt-5"])


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (
            {"workers": ["claude", "nope"]},
            "--workers: unknown provider 'nope'; known providers: claude, codex, antigravity, grok, kimi",
        ),
        (
            {"role_models": ["analyst=nope/x"]},
            "--role-model analyst=nope/x: unknown provider 'nope'; known providers: claude, codex, antigravity, grok, kimi",
        ),
        (
            {"role_models": ["analyst=codex/gpt-9"]},
            "--role-model analyst=codex/gpt-9: provider 'codex' has no model id 'gpt-9'; known models of codex: gpt-5-codex, gpt-5",
        ),
        (
            {"role_models": ["analyst=codex/GPT-5 Codex"]},
            "--role-model analyst=codex/GPT-5 Codex: provider 'codex' has no model id 'GPT-5 Codex'; use the model id 'gpt-5-codex'",
        ),
    ],
)
def test_refuses_unknown_providers_and_models_listing_the_known_ones(kw, message):
    with pytest.raises(RefusedError) as err:
        _plan(task_type="analysis", **kw)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("kw", "fragment"),
    [
        ({"workers": []}, "the roster is empty"),
        ({"workers": ["claude", "claude"]}, "'claude' is named twice"),
        ({"role_models": ["analyst"]}, "is not ROLE=PROVIDER/MODEL"),
        ({"role_models": ["boss=claude/claude-opus-4-1"]}, "unknown role 'boss'; known roles: leader, analyst"),
        (
            {"role_models": ["planner=claude/claude-opus-4-1"]},
            "the analysis task type has no planner role; roles of analysis: analyst, critic",
        ),
        ({"role_models": ["analyst=codex/gpt-5", "analyst=codex/gpt-5-codex"]}, "role analyst is pinned twice"),
        ({"report_language": "../x"}, "'../x' is not a language tag"),
        ({"task_type": "nope"}, "'nope' is not a task type; use one of analysis"),
    ],
)
def test_refuses_malformed_requests(kw, fragment):
    kw.setdefault("task_type", "analysis")
    with pytest.raises(InputError, match=None) as err:
        _plan(**kw)
    assert fragment in str(err.value)


# --- sources ------------------------------------------------------------------


def _config(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_flags_beat_env_beats_project_beats_global_beats_builtin(isolated_env, project, monkeypatch):
    def roster(**kw):
        return _plan(project, task_type="analysis", **kw).roster

    assert roster(workers=None) == ("claude", "codex")
    _config(isolated_env / ".okstra" / "config.yaml", "default-workers: grok\n")
    assert roster(workers=None) == ("grok",)
    _config(project / ".okstra" / "config.yaml", "default-workers: kimi,codex\n")
    assert roster(workers=None) == ("kimi", "codex")
    monkeypatch.setenv("OKSTRA_DEFAULT_WORKERS", "antigravity")
    assert roster(workers=None) == ("antigravity",)
    assert roster(workers=["claude"]) == ("claude",)


def test_the_report_language_comes_from_config_when_no_flag(project, monkeypatch):
    _config(project / ".okstra" / "config.yaml", "report-language: ko\n")
    assert _plan(project, task_type="analysis").report_language == "ko"
    monkeypatch.setenv("OKSTRA_REPORT_LANGUAGE", "ja")
    assert _plan(project, task_type="analysis").report_language == "ja"
    assert _plan(project, task_type="analysis", report_language="de").report_language == "de"


def test_an_unknown_provider_in_config_is_refused_naming_its_source(project):
    _config(project / ".okstra" / "config.yaml", "default-workers: claude,nope\n")
    with pytest.raises(RefusedError, match=r"default-workers \(project .*config.yaml\): unknown provider 'nope'"):
        _plan(project, task_type="analysis", workers=None)


# --- the original tool's roster rules (issue 11) ---------------------------------


def test_a_named_executor_joins_the_built_in_roster():
    plan = _plan(task_type="implementation", workers=None, executor="kimi")
    assert (plan.roster, plan.executor) == (("claude", "codex", "kimi"), "kimi")
    assert ("kimi", "implementer") in [(e.worker_id, e.role) for e in plan.first_round]


def test_the_default_executor_is_claude_not_the_first_roster_worker():
    assert _plan(task_type="implementation", workers=["codex", "claude"]).executor == "claude"
    assert _plan(task_type="implementation", workers=["codex", "grok"]).executor == "codex"


def test_a_translator_outside_the_roster_gets_its_own_worker_for_its_round():
    plan = _plan(task_type="analysis", role_models=["translator=kimi/kimi-k2"], report_language="ko")
    assert [(a.worker_id, a.model_id, a.roles) for a in plan.assignments if a.worker_id == "kimi"] == [
        ("kimi", "kimi-k2", ("translator",))
    ]
    assert [e.worker_id for e in plan.first_round] == ["claude", "codex"]


def test_a_first_round_role_outside_the_roster_is_dispatched_with_the_roster():
    plan = _plan(task_type="analysis", role_models=["analyst=grok/grok-4"])
    assert [(e.worker_id, e.role, e.model_id) for e in plan.first_round] == [
        ("claude", "analyst", "claude-sonnet-4-5"),
        ("codex", "analyst", "gpt-5-codex"),
        ("grok", "analyst", "grok-4"),
    ]
