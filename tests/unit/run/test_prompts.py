"""The prompt contract (DESIGN §4): every problem at once, one line each."""

from __future__ import annotations

import json

import pytest

from okstra.commands import prompt_check
from okstra.core.errors import InputError, PathEscapeError, StateError
from okstra.model import run_manifest, team_state
from okstra.model.layout import check_worker_id, open_run
from okstra.run import bundle, catalog, prompts


@pytest.fixture
def run(project):
    result = bundle.render(
        project, bundle.BundleRequest("feature/demo", "analysis", brief="a test task", workers=["claude", "kimi"])
    )
    manifest = run_manifest.load(result.run_manifest_path)
    state = team_state.load(result.team_state_path)
    return project, manifest, state, catalog.load(project)


def _text(project, dispatch):
    return (project / dispatch.prompt_path).read_text()


def _replace(text, header, value):
    return "\n".join(f"**{header}:** {value}" if line.startswith(f"**{header}:**") else line for line in text.splitlines())


def test_a_rendered_prompt_is_clean(run):
    project, manifest, state, cat = run
    for d in state.dispatches:
        assert prompts.check(_text(project, d), manifest, d, cat) == []


def test_the_header_lines_come_first(run):
    project, _, state, _ = run
    head = _text(project, state.find("kimi")).splitlines()[:5]
    assert head == [
        "**Task Type:** analysis",
        "**Model:** Kimi K2 Thinking, kimi-k2",
        "**Prompt Delivery Mode:** argument",
        head[3],
        "**Evidence Ledger:** .okstra/runs/feature--demo--r001/results/kimi.evidence",
    ]
    assert head[3].startswith("**Forbidden Actions:** editing, creating or deleting any project file")


def test_a_prompt_naming_another_model_names_the_expected_model(run):
    project, manifest, state, cat = run
    d = state.find("kimi")
    text = _replace(_text(project, d), "Model", "Kimi K2 Instruct, kimi-k2-instruct")
    assert prompts.check(text, manifest, d, cat) == [
        "**Model:** names model 'kimi-k2-instruct', but worker kimi runs 'kimi-k2'; expected 'Kimi K2 Thinking, kimi-k2'"
    ]


def test_a_display_name_in_place_of_the_model_id_is_caught(run):
    project, manifest, state, cat = run
    d = state.find("kimi")
    problems = prompts.check(_replace(_text(project, d), "Model", "Kimi K2 Thinking"), manifest, d, cat)
    assert problems == ["**Model:** 'Kimi K2 Thinking' is not '<label>, <model-id>'; expected 'Kimi K2 Thinking, kimi-k2'"]


def test_a_wrong_label_for_the_right_id_is_caught(run):
    project, manifest, state, cat = run
    d = state.find("kimi")
    problems = prompts.check(_replace(_text(project, d), "Model", "Kimi K3, kimi-k2"), manifest, d, cat)
    assert problems == ["**Model:** label 'Kimi K3' is not the display name of kimi-k2; expected 'Kimi K2 Thinking, kimi-k2'"]


def test_every_problem_is_reported_at_once(run):
    project, manifest, state, cat = run
    d = state.find("claude")
    text = _text(project, d)
    text = "\n".join(line for line in text.splitlines() if not line.startswith("**Evidence Ledger:**"))
    text = _replace(text, "Task Type", "implementation")
    text = _replace(text, "Prompt Delivery Mode", "stdin")
    text += "\n**Forbidden Actions:** nothing\n**Model:** Claude Sonnet 4.5, claude-sonnet-4-5\n"
    problems = prompts.check(text, manifest, d, cat)
    assert len(problems) == 5
    assert "missing header **Evidence Ledger:**" in problems
    assert any(p.startswith("header **Forbidden Actions:** appears 2 times (lines 4, ") for p in problems)
    assert any(p.startswith("header **Model:** appears 2 times") for p in problems)
    assert "**Task Type:** is 'implementation', expected 'analysis' (the run's task type)" in problems
    assert "**Prompt Delivery Mode:** 'stdin' is not one of argument" in problems


def test_empty_headers_are_problems(run):
    project, manifest, state, cat = run
    d = state.find("claude")
    text = _replace(_replace(_text(project, d), "Forbidden Actions", ""), "Evidence Ledger", "")
    assert prompts.check(text, manifest, d, cat) == [
        "header **Forbidden Actions:** is empty",
        "header **Evidence Ledger:** is empty",
    ]


def test_an_empty_prompt_lacks_every_header(run):
    _, manifest, state, cat = run
    assert prompts.check("", manifest, state.find("claude"), cat) == [f"missing header **{h}:**" for h in prompts.HEADERS]


def test_the_implementer_prompt_names_the_stage_boundary(project):
    result = bundle.render(
        project,
        bundle.BundleRequest(
            "feature/demo", "implementation", brief="a test task", workers=["codex", "claude"], executor="codex"
        ),
    )
    text = result.prompt_paths["codex"].read_text()
    assert "**Forbidden Actions:** editing files the approved plan does not name" in text
    assert "Implement the approved" in text.replace("\n", " ")
    assert "Verify the implementer's work" in result.prompt_paths["claude"].read_text().replace("\n", " ")


# --- the command ----------------------------------------------------------------


def _args(manifest, prompt, worker):
    return [prompt, "--run-manifest", f"{manifest.run_dir}/run-manifest.json", "--worker", worker]


def test_main_exits_0_when_clean_and_1_with_one_line_per_problem(run, capsys):
    project, manifest, state, _ = run
    d = state.find("kimi")
    assert prompt_check.main(_args(manifest, d.prompt_path, "kimi")) == 0
    (project / "edited.md").write_text(_replace(_text(project, d), "Model", "GPT-5, gpt-5"))
    assert prompt_check.main(_args(manifest, "edited.md", "kimi")) == 1
    assert capsys.readouterr().err == (
        "prompt-check: **Model:** names model 'gpt-5', but worker kimi runs 'kimi-k2'; expected 'Kimi K2 Thinking, kimi-k2'\n"
    )


def test_main_json(run, capsys):
    _, manifest, state, _ = run
    assert prompt_check.main([*_args(manifest, state.find("kimi").prompt_path, "kimi"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "prompt": ".okstra/runs/feature--demo--r001/prompts/kimi.md",
        "worker": "kimi",
        "ok": True,
        "problems": [],
    }


@pytest.mark.parametrize(
    ("prompt", "manifest_path", "worker", "error"),
    [
        ("/etc/passwd", None, "kimi", PathEscapeError),
        ("../x.md", None, "kimi", PathEscapeError),
        (None, "/etc/hosts", "kimi", PathEscapeError),
        (None, None, "../kimi", InputError),
        (None, None, "grok", StateError),
        (None, "prompts/kimi.md", "kimi", InputError),
    ],
)
def test_check_file_refuses_hostile_paths_and_ids(run, prompt, manifest_path, worker, error):
    project, manifest, state, _ = run
    prompt = prompt or state.find("kimi").prompt_path
    manifest_path = manifest_path if manifest_path in (None, "/etc/hosts") else f"{manifest.run_dir}/{manifest_path}"
    manifest_path = manifest_path or f"{manifest.run_dir}/run-manifest.json"
    with pytest.raises(error):
        check_worker_id(worker, "--worker")
        prompts.check_file(open_run(manifest_path), prompt, worker)
