"""team.backends.registry: the backend a run's manifest names, the one place that branches on it (DESIGN §6)."""

from __future__ import annotations

import json
import os

import pytest

from fixtures.runs import make_run
from fixtures.tmux import private_server
from okstra.core import cli
from okstra.core.errors import StateError
from okstra.model.layout import open_run
from okstra.team.backends import registry
from okstra.team.backends.cmux import CmuxBackend
from okstra.team.backends.subprocess import SubprocessBackend
from okstra.team.backends.tmux import TmuxBackend


@pytest.fixture
def server(monkeypatch, tmp_path):
    yield from private_server(monkeypatch, tmp_path)


def _run(project, backend: str, lead: str | None = None):
    layout, _ = make_run(project, ["claude"], backend=backend)
    if lead is not None:
        doc = json.loads(layout.manifest.read_text(encoding="utf-8"))
        doc["leadPaneId"] = lead
        layout.manifest.write_text(json.dumps(doc), encoding="utf-8")
    return open_run(str(layout.manifest), project_root=project)


@pytest.mark.parametrize(
    ("name", "kind"), [("tmux-pane", TmuxBackend), ("cmux-pane", CmuxBackend), ("cli-wrapper", SubprocessBackend)]
)
def test_the_backend_is_the_one_the_manifest_names(project, name, kind):
    run = _run(project, name, lead="%4" if name == "tmux-pane" else None)
    backend = registry.for_run(run)
    assert type(backend) is kind
    assert (backend.run_id, backend.project_root) == ("feature--rate-limit--r001", project)
    assert backend.lead_pane_id == ("%4" if name == "tmux-pane" else None)


def test_an_unknown_backend_is_refused_naming_the_run_and_the_known_ones(project):
    run = _run(project, "cli-wrapper")
    doc = json.loads(run.manifest_path.read_text(encoding="utf-8"))
    doc["terminalBackend"] = "screen"
    run.manifest_path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(StateError) as refused:
        registry.for_run(open_run(str(run.manifest_path), project_root=project))
    assert str(refused.value) == (
        "run manifest feature--rate-limit--r001: terminalBackend 'screen' is not known; use cli-wrapper, tmux-pane or cmux-pane"
    )
    assert cli.exit_code_for(refused.value) == 2


def test_the_backend_passes_on_only_path_home_and_okstras_knobs_of_the_environment_given(project):
    run = _run(project, "cli-wrapper")
    env = {"PATH": "/p", "HOME": "/h", "OKSTRA_FAKE_MODE_CLAUDE": "slow", "GITHUB_TOKEN": "no"}
    assert registry.for_run(run, env=env).env == {"HOME": "/h", "OKSTRA_FAKE_MODE_CLAUDE": "slow", "PATH": "/p"}


def test_without_an_environment_given_the_backend_reads_the_processes_own(project, monkeypatch):
    monkeypatch.setenv("OKSTRA_FAKE_MODE_CODEX", "rate-limit")
    monkeypatch.setenv("GITHUB_TOKEN", "no")
    env = registry.for_run(_run(project, "cli-wrapper")).env
    assert env["OKSTRA_FAKE_MODE_CODEX"] == "rate-limit" and env["PATH"] == os.environ["PATH"]
    assert "GITHUB_TOKEN" not in env


def test_background_processes_work_anywhere(tmp_path):
    assert registry.unusable("cli-wrapper", tmp_path, None) is None


def test_cmux_is_unusable_where_it_is_not_installed(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    assert registry.unusable("cmux-pane", tmp_path, None) == "cmux is not installed here (not on PATH)"


def test_tmux_is_unusable_where_it_is_not_installed(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    assert registry.unusable("tmux-pane", tmp_path, "%1") == "tmux is not installed here (not on PATH)"


def test_tmux_is_unusable_without_a_lead_pane(tmp_path):
    assert registry.unusable("tmux-pane", tmp_path, None) == (
        "no lead pane: not inside tmux ($TMUX_PANE is not set) and no --lead-pane"
    )


def test_tmux_is_usable_with_a_lead_pane_on_the_server_and_not_with_one_that_is_not(tmp_path, server):
    assert registry.unusable("tmux-pane", tmp_path, server.lead) is None
    assert registry.unusable("tmux-pane", tmp_path, None) is None  # $TMUX_PANE is the lead
    why = registry.unusable("tmux-pane", tmp_path, "%999")
    assert why is not None and why.startswith("the lead pane %999 is not on the tmux server: ")
