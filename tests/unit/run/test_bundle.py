"""render-bundle (DESIGN §3): what it writes, that all of it validates, and that refusals write nothing."""

from __future__ import annotations

import json

import pytest

from conftest import tree_snapshot
from okstra.commands import render_bundle
from okstra.core import schemas
from okstra.core.errors import InputError, ProblemsFound, RefusedError
from okstra.model import active_run, run_manifest, team_state
from okstra.model.dispatch import Dispatch, Estimate, FailoverFrom, ScopeCheck
from okstra.model.run_manifest import TASK_TYPES, RunManifest
from okstra.run import bundle, catalog, prompts

SCHEMA_OF = {"run-manifest.json": "run-manifest", "team-state.json": "team-state", "active-run.json": "active-run"}


def _render(project, **kw):
    kw.setdefault("task_key", "feature/demo")
    kw.setdefault("task_type", "analysis")
    kw.setdefault("workers", ["claude", "codex"])
    kw.setdefault("brief", "a test task")
    # The steps without the concurrent-run gate (tested on its own): runs rendered one
    # after another here never ran their workers.
    return bundle.write(bundle.prepare(project, bundle.BundleRequest(**kw)))


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_every_json_document_written_validates_against_its_schema(project, task_type):
    result = _render(project, task_type=task_type, report_language="ko", workers=["claude", "codex", "kimi"])
    written = [p for p in result.written if p.suffix == ".json"]
    assert {p.name for p in written} == set(SCHEMA_OF)
    for path in written:
        assert schemas.problems(SCHEMA_OF[path.name], json.loads(path.read_text())) == [], path


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_every_rendered_prompt_passes_the_prompt_contract(project, task_type):
    result = _render(project, task_type=task_type, workers=["claude", "codex", "antigravity", "grok", "kimi"])
    manifest = run_manifest.load(result.run_manifest_path)
    cat = catalog.load(project)
    for dispatch in team_state.load(result.team_state_path).dispatches:
        text = (project / dispatch.prompt_path).read_text()
        assert prompts.check(text, manifest, dispatch, cat) == [], dispatch.worker_id
        assert f"**Model:** {cat.provider(dispatch.provider).model(dispatch.model_id).display}, {dispatch.model_id}\n" in text


def test_team_state_holds_one_pending_dispatch_per_worker_with_recorded_paths(project):
    result = _render(project)
    state = team_state.load(result.team_state_path)
    run = bundle.layout.for_project(project).run(result.run_id)
    assert [d.worker_id for d in state.dispatches] == ["claude", "codex"]
    for d in state.dispatches:
        assert (d.status, d.attempt, d.role) == ("pending", 1, "analyst")
        assert d.prompt_path == run.relative(run.prompt_path(d.worker_id))
        assert d.result_path == run.relative(run.result_path(d.worker_id))
        assert d.liveness_artifact == run.relative(run.heartbeat_path(d.worker_id))
        assert (project / d.prompt_path).is_file()


def test_the_manifest_records_the_plan_and_project_relative_paths(project):
    result = _render(project, report_language="ko")
    manifest = run_manifest.load(result.run_manifest_path)
    assert (manifest.run_id, manifest.task_key, manifest.task_type) == ("feature--demo--r001", "feature/demo", "analysis")
    assert (manifest.run_number, manifest.report_number, manifest.terminal_backend) == (1, 1, "cli-wrapper")
    assert manifest.team_state_path == ".okstra/runs/feature--demo--r001/team-state.json"
    assert {r.role for r in manifest.role_executions} == {"leader", "analyst", "report-writer", "translator"}
    assert {p.role for p in manifest.participants} == {"leader", "analyst", "report-writer", "translator"}
    assert manifest.assignment("codex").cli_model == "gpt-5-codex"


def test_the_active_run_points_at_the_new_run(project):
    result = _render(project)
    active = active_run.load(project)
    assert (active.run_id, active.phase, active.stage) == (result.run_id, "dispatch", None)
    assert active.run_manifest_path == ".okstra/runs/feature--demo--r001/run-manifest.json"


def test_run_numbers_move_on_while_the_free_report_number_is_reused(project):
    first, second = _render(project), _render(project)
    assert (first.run_number, first.report_number) == (1, 1)
    assert (second.run_number, second.report_number) == (2, 1)
    bundle.layout.commit(bundle.layout.for_project(project), bundle.layout.TaskKey.parse("feature/demo"), "reports", 1)
    third = _render(project)
    assert (third.run_id, third.report_number) == ("feature--demo--r003", 2)


def test_the_lead_pane_defaults_to_tmux_pane_with_the_tmux_backend(project, monkeypatch):
    monkeypatch.setenv("TMUX_PANE", "%12")
    monkeypatch.delenv("TMUX", raising=False)
    assert _render(project, backend="tmux-pane").manifest.lead_pane_id == "%12"
    assert _render(project, backend="cli-wrapper").manifest.lead_pane_id is None
    assert _render(project, backend="tmux-pane", lead_pane="%3").manifest.lead_pane_id == "%3"


def test_the_backend_comes_from_config_when_not_given(project, monkeypatch):
    monkeypatch.setenv("OKSTRA_DEFAULT_BACKEND", "cmux-pane")
    assert _render(project).manifest.terminal_backend == "cmux-pane"


def test_the_result_lists_project_relative_paths(project):
    doc = _render(project).to_dict()
    assert doc["runDir"] == ".okstra/runs/feature--demo--r001"
    assert doc["runManifestPath"].endswith("/run-manifest.json") and not doc["runManifestPath"].startswith("/")
    assert set(doc["prompts"]) == {"claude", "codex"}


@pytest.mark.parametrize(
    ("kw", "error", "fragment"),
    [
        ({"executor": "grok", "task_type": "implementation"}, RefusedError, "add it with --workers claude,codex,grok"),
        (
            {"executor": "claude", "task_type": "implementation", "role_models": ["verifier=claude/claude-opus-4-1"]},
            RefusedError,
            "two models",
        ),
        ({"workers": ["nope"]}, RefusedError, "unknown provider 'nope'"),
        ({"task_key": "../etc"}, InputError, "is not a task key"),
        ({"task_type": "nope"}, InputError, "is not a task type"),
        ({"backend": "screen"}, InputError, "is not a backend"),
        ({"backend": "tmux-pane", "lead_pane": "$(rm -rf /)"}, InputError, "is not a pane id"),
        ({"stage": 1, "task_type": "implementation"}, InputError, "--stage needs --plan PLAN"),
        ({"stage": 0}, InputError, "is not a stage number"),
    ],
)
def test_refusals_write_nothing(project, kw, error, fragment):
    (project / ".okstra").mkdir()
    (project / ".okstra" / "keep").write_text("x")
    before = tree_snapshot(project / ".okstra")
    with pytest.raises(error) as err:
        _render(project, **kw)
    assert fragment in str(err.value)
    assert tree_snapshot(project / ".okstra") == before


def test_a_hostile_tmux_pane_value_is_refused(project, monkeypatch):
    monkeypatch.setenv("TMUX_PANE", "%1; rm -rf /")
    with pytest.raises(InputError, match="TMUX_PANE"):
        _render(project, backend="tmux-pane")
    assert not (project / ".okstra").exists()


def test_main_prints_json_and_human_lines(project, capsys):
    argv = ["--task-key", "feature/demo", "--task-type", "analysis", "--workers", "claude", "--brief", "a test task"]
    assert render_bundle.main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"runId", "runDir", "runManifestPath", "teamStatePath"} <= set(doc)
    assert render_bundle.main([*argv, "--replace-active"]) == 0
    out = capsys.readouterr().out
    assert "runId: feature--demo--r002\n" in out and "teamStatePath: .okstra/runs/feature--demo--r002/team-state.json\n" in out


def test_main_refuses_a_bad_stage_argument_with_exit_2(project, capsys):
    assert render_bundle.main(["--task-key", "a/b", "--task-type", "implementation", "--stage", "x"]) == 2
    assert capsys.readouterr().err == "render-bundle: --stage 'x' is not a whole number from 1 up; pass --stage 1, 2, …\n"


# --- the schemas match what the records write --------------------------------


def _schema(name):
    return json.loads(schemas.path_of(name).read_text())


def test_the_team_state_schema_lists_exactly_the_dispatch_fields():
    dispatch = _schema("team-state")["$defs"]["dispatch"]
    fields = set(Dispatch("w", "analyst", "codex", "gpt-5").to_dict())
    optional = set(
        Dispatch(
            "w",
            "analyst",
            "codex",
            "gpt-5",
            scope_check=ScopeCheck("in-scope"),
            estimate=Estimate(1, None),
            failover_from=FailoverFrom("w", 1, "codex", "rate-limited"),
        ).to_dict()
    )
    assert set(dispatch["properties"]) == optional
    assert set(dispatch["required"]) == fields


def test_the_run_manifest_schema_lists_exactly_the_manifest_fields():
    schema = _schema("run-manifest")
    fields = set(RunManifest("r", "a/b", "analysis", 1, 1, "cli-wrapper", "t", "d", "s", "p", "r", "l", "o").to_dict())
    assert set(schema["properties"]) == set(schema["required"]) == fields


def test_the_active_run_schema_lists_exactly_the_active_run_fields():
    schema = _schema("active-run")
    fields = set(active_run.ActiveRun("r", "a/b", "analysis", "d", "m", "dispatch").to_dict())
    assert set(schema["properties"]) == set(schema["required"]) == fields


# --- issue 11: brief, gates, backend, all-or-nothing -------------------------------


def test_the_brief_reaches_every_prompt_and_is_kept_for_later_rounds(project):
    result = _render(project, brief="Make greet() handle names with spaces.\nAcceptance: tests pass.")
    for path in result.prompt_paths.values():
        assert "Make greet() handle names with spaces." in path.read_text()
    assert (result.run_dir / "brief.md").read_text().startswith("Make greet()")


@pytest.mark.parametrize("brief", [None, "   "])
def test_a_run_without_a_brief_is_refused_and_nothing_written(project, brief):
    before = tree_snapshot(project)
    with pytest.raises(InputError, match="--brief"):
        _render(project, brief=brief)
    assert tree_snapshot(project) == before


def test_the_backend_defaults_to_panes_inside_tmux_and_processes_outside(project, monkeypatch):
    monkeypatch.setenv("TMUX", "/tmp/tmux-1000/default,1,0")
    monkeypatch.setenv("TMUX_PANE", "%4")
    assert _render(project).manifest.terminal_backend == "tmux-pane"
    monkeypatch.delenv("TMUX")
    assert _render(project).manifest.terminal_backend == "cli-wrapper"


def test_tmux_pane_without_a_lead_pane_is_refused_before_writing(project, monkeypatch):
    monkeypatch.delenv("TMUX_PANE", raising=False)
    before = tree_snapshot(project)
    with pytest.raises(RefusedError, match="needs the lead's pane"):
        _render(project, backend="tmux-pane")
    assert tree_snapshot(project) == before


def test_an_active_run_with_unfinished_workers_blocks_the_next_render(project):
    first = _render(project)
    before = tree_snapshot(project)
    with pytest.raises(ProblemsFound) as refused:
        bundle.render(project, bundle.BundleRequest("feature/other", "analysis", brief="x"))
    assert refused.value.problems[0].startswith(f"run {first.run_id} (task feature/demo, analysis) is still active")
    assert "--replace-active" in refused.value.problems[1]
    assert tree_snapshot(project) == before


def test_a_failed_write_leaves_no_run_and_no_counter(project, monkeypatch):
    _render(project)
    before = tree_snapshot(project)
    real = bundle.fsio.write_json

    def disk_full(path, document):
        if path.name == "run-manifest.json":
            raise OSError(28, "No space left on device")
        return real(path, document)

    monkeypatch.setattr(bundle.fsio, "write_json", disk_full)
    with pytest.raises(OSError):
        _render(project)
    assert tree_snapshot(project) == before
    monkeypatch.setattr(bundle.fsio, "write_json", real)
    assert _render(project).run_number == 2


def test_the_staging_folder_of_a_killed_render_is_swept_by_the_next_one_of_the_task(project):
    """A render-bundle SIGKILLed mid-write leaves its staging folder; the counter never moved,
    so the next render of the task takes the same number and sweeps it (make hostile found it)."""
    runs = project / ".okstra" / "runs"
    killed = runs / ".feature--demo--r001.k1ll3d.tmp"
    (killed / "prompts").mkdir(parents=True)
    (killed / "prompts" / "claude.md").write_text("half a prom")
    other = runs / ".feature--other--r001.busy.tmp"  # another task's render, maybe mid-write: left alone
    other.mkdir()
    result = _render(project)
    assert result.run_number == 1 and result.run_dir.is_dir()
    assert not killed.exists() and other.exists()
