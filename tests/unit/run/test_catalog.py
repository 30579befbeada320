"""Loading the provider catalog: built-in YAML, then global, then project overrides."""

from __future__ import annotations

import pytest

from okstra.core import schemas
from okstra.core.errors import InputError
from okstra.run import catalog

EXPECTED_COMMANDS = {
    "claude": [
        "claude",
        "-p",
        "P",
        "--model",
        "M",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "acceptEdits",
    ],
    "codex": ["codex", "exec", "--skip-git-repo-check", "--json", "-s", "workspace-write", "-m", "M", "-o", "/r/a.md", "P"],
    "antigravity": [
        "gemini",
        "-p",
        "P",
        "-m",
        "M",
        "--output-format",
        "stream-json",
        "--approval-mode",
        "auto_edit",
        "--skip-trust",
    ],
    "grok": ["grok", "-p", "P", "-m", "M", "--output-format", "json", "--always-approve", "--no-auto-update"],
    "kimi": ["kimi", "-p", "P", "-m", "M", "--output-format", "stream-json"],
}


def _global(home, text):
    path = home / ".okstra" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _project(project, text):
    path = project / ".okstra" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_builtin_catalog_validates_against_its_schema():
    assert schemas.problems("provider-catalog", catalog.document()) == []


def test_the_builtin_providers_and_their_display_names():
    cat = catalog.load()
    assert cat.ids() == ("claude", "codex", "antigravity", "grok", "kimi")
    assert [p.display for p in cat.providers] == ["Claude Code", "Codex", "Antigravity", "Grok", "Kimi"]
    for p in cat.providers:
        assert 1 <= len(p.models) <= 3
        assert p.default.id == p.default_model
    assert cat.provider("claude").runner == "native-session"
    assert {p.runner for p in cat.providers[1:]} == {"cli-wrapper"}


@pytest.mark.parametrize("provider_id", list(EXPECTED_COMMANDS))
def test_each_provider_runs_its_real_non_interactive_command_line(provider_id, tmp_path):
    from pathlib import Path

    p = catalog.load().provider(provider_id)
    argv = p.argv(p.default, "P", Path("/r/a.md"), Path("/r"))
    expected = [p.default.cli_model if a == "M" else a for a in EXPECTED_COMMANDS[provider_id]]
    assert argv == expected
    assert "--full-auto" not in argv


def test_claude_retries_are_bounded_by_its_own_knob_and_every_provider_says_how():
    cat = catalog.load()
    assert dict(cat.provider("claude").env) == {"CLAUDE_CODE_MAX_RETRIES": "2"}
    assert all(p.retry_bound for p in cat.providers)


def test_a_config_env_outside_the_clis_own_knobs_is_refused(isolated_env, project):
    _project(project, "providers:\n  claude:\n    env:\n      LD_PRELOAD: /tmp/x.so\n")
    with pytest.raises(InputError):
        catalog.load(project)


def test_model_ids_differ_from_display_names_where_the_cli_says_so():
    cat = catalog.load()
    gemini = cat.provider("antigravity").model("gemini-3-pro")
    assert (gemini.display, gemini.cli_model) == ("Gemini 3 Pro", "gemini-3-pro-preview")
    kimi = cat.provider("kimi").model("kimi-k2")
    assert (kimi.display, kimi.cli_model) == ("Kimi K2 Thinking", "kimi-k2-thinking-turbo")


def test_global_config_adds_a_model_and_project_config_overrides_it(isolated_env, project):
    _global(
        isolated_env, "providers:\n  codex:\n    models:\n      o4-mini:\n        display: o4 mini\n        cliModel: o4-mini\n"
    )
    assert "o4-mini" in catalog.load(project).provider("codex").model_ids()
    _project(
        project,
        "providers:\n  codex:\n    defaultModel: o4-mini\n    models:\n      o4-mini:\n        display: o4 Mini (project)\n",
    )
    codex = catalog.load(project).provider("codex")
    assert codex.default_model == "o4-mini"
    assert codex.model("o4-mini").display == "o4 Mini (project)"
    assert codex.model("o4-mini").cli_model == "o4-mini"  # merged from the global entry
    assert codex.model("gpt-5-codex").display == "GPT-5 Codex"  # built-in models kept


def test_a_user_can_add_a_whole_provider_and_remove_one(isolated_env, project):
    _project(
        project,
        """providers:
  kimi: null
  local:
    display: Local LLM
    binary: llm
    models:
      qwen3:
        display: Qwen 3
        cliModel: qwen3:32b
    defaultModel: qwen3
    command: ["{binary}", "-m", "{model}", "{prompt}"]
    promptDelivery: argument
    outputFormat: claude-json
    usageSource: none
    runner: cli-wrapper
""",
    )
    cat = catalog.load(project)
    assert "kimi" not in cat.ids()
    assert cat.provider("local").model("qwen3").cli_model == "qwen3:32b"


def test_an_incomplete_new_provider_is_refused_naming_the_field(project):
    _project(project, "providers:\n  local:\n    display: Local\n")
    with pytest.raises(
        InputError, match=r"provider catalog .*config.yaml.*\$\.providers\.local: 'binary' is a required property"
    ):
        catalog.load(project)


def test_a_default_model_outside_the_models_is_refused(project):
    _project(project, "providers:\n  codex:\n    defaultModel: gpt-9\n")
    with pytest.raises(InputError, match=r"defaultModel 'gpt-9' is not one of its models; known models: gpt-5-codex, gpt-5"):
        catalog.load(project)


def test_a_command_without_the_prompt_placeholder_is_refused(project):
    _project(project, 'providers:\n  codex:\n    command: ["codex", "exec"]\n')
    with pytest.raises(InputError, match="command"):
        catalog.load(project)


def test_bad_yaml_names_the_file_and_line(isolated_env):
    path = _global(isolated_env, "providers:\n  codex:\n    display: [Codex\n")
    with pytest.raises(InputError, match=rf"{path}: not valid YAML at line \d+"):
        catalog.load()


def test_yaml_1_1_coercions_do_not_change_model_values(project):
    _project(project, "providers:\n  codex:\n    models:\n      '1.10':\n        display: on\n        cliModel: 1.10\n")
    model = catalog.load(project).provider("codex").model("1.10")
    assert (model.display, model.cli_model) == ("on", "1.10")
