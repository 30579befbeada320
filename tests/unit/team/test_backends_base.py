"""team.backends.base: the one small interface of the three terminal backends (DESIGN §6)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from okstra.core import cli
from okstra.core.errors import ProcessError, StateError
from okstra.team.backends import base
from okstra.team.backends.base import Backend, Closed, Launched, LaunchSpec, PartialLaunch
from okstra.team.backends.registry import BACKENDS


@dataclass
class Recording(Backend):
    """The smallest backend: it starts nothing, records what it was asked."""

    name = "recording"
    has_panes = True

    def check_pane_id(self, value: str, source: str) -> str:
        if not value.startswith("rec:"):
            raise base.bad_pane_id(self.name, value, source)
        return value

    def launch(self, specs: Sequence[LaunchSpec]) -> list[Launched]:
        return [Launched(s, f"rec:{s.worker_id}", None) for s in specs]

    def close(self, pane_ids: Sequence[str], *, dry_run: bool = False) -> Closed:
        return Closed(closed=tuple(self.check_pane_id(p, "pane") for p in pane_ids))


def _spec(tmp_path: Path, worker: str = "w1") -> LaunchSpec:
    return LaunchSpec(worker, 1, ("true",), f"okstra {worker}", tmp_path / f"{worker}.log", tmp_path)


def test_a_launched_process_inherits_path_home_and_okstras_knobs_only():
    environ = {
        "PATH": "/bin",
        "HOME": "/home/u",
        "OKSTRA_TMUX_SOCKET": "/tmp/s",
        "OKSTRA_FAKE_MODE_CODEX": "rate-limit",
        "AWS_SECRET_ACCESS_KEY": "no",
        "TMUX_PANE": "%1",
        "okstra_lower": "no",
        "XOKSTRA_Y": "no",
    }
    assert base.passed_env(environ) == {
        "HOME": "/home/u",
        "OKSTRA_FAKE_MODE_CODEX": "rate-limit",
        "OKSTRA_TMUX_SOCKET": "/tmp/s",
        "PATH": "/bin",
    }
    assert list(base.passed_env(environ)) == sorted(base.passed_env(environ))


def test_without_an_environment_given_the_processes_own_is_read(monkeypatch):
    monkeypatch.setenv("OKSTRA_SOMETHING", "1")
    monkeypatch.setenv("UNRELATED_VALUE", "2")
    env = base.passed_env()
    assert env["OKSTRA_SOMETHING"] == "1" and "UNRELATED_VALUE" not in env


def test_a_backends_environment_is_read_when_it_is_made_and_is_its_own(monkeypatch, tmp_path):
    monkeypatch.setenv("OKSTRA_AT_MAKE", "first")
    one = Recording(run_id="r", project_root=tmp_path)
    monkeypatch.setenv("OKSTRA_AT_MAKE", "second")
    two = Recording(run_id="r", project_root=tmp_path)
    one.env["OKSTRA_ADDED"] = "x"
    assert (one.env["OKSTRA_AT_MAKE"], two.env["OKSTRA_AT_MAKE"]) == ("first", "second")
    assert "OKSTRA_ADDED" not in two.env


def test_the_interface_cannot_be_used_without_its_three_operations(tmp_path):
    with pytest.raises(TypeError, match="abstract"):
        Backend(run_id="r", project_root=tmp_path)  # type: ignore[abstract]

    @dataclass
    class Half(Backend):
        name = "half"
        has_panes = False

        def check_pane_id(self, value: str, source: str) -> str:
            return value

    with pytest.raises(TypeError, match=r"abstract.*(close|launch)"):
        Half(run_id="r", project_root=tmp_path)  # type: ignore[abstract]


def test_a_backend_is_usable_unless_it_says_why_not(tmp_path):
    assert Recording(run_id="r", project_root=tmp_path).unusable_here() is None


def test_a_small_backend_launches_and_closes_through_the_interface(tmp_path):
    b = Recording(run_id="r", project_root=tmp_path, lead_pane_id="rec:lead")
    specs = [_spec(tmp_path, "w1"), _spec(tmp_path, "w2")]
    launched = b.launch(specs)
    assert [(x.spec, x.pane_id, x.pid) for x in launched] == [(specs[0], "rec:w1", None), (specs[1], "rec:w2", None)]
    assert b.close(["rec:w1"]) == Closed(closed=("rec:w1",))
    with pytest.raises(StateError, match=r"^pane: '%1' is not a recording pane id; "):
        b.close(["%1"])


def test_a_spec_is_a_worker_unless_it_says_watcher_and_is_frozen(tmp_path):
    spec = _spec(tmp_path)
    assert spec.kind == base.WORKER == "worker" and base.WATCHER == "watcher"
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.title = "x"  # type: ignore[misc]


def test_nothing_closed_is_the_empty_answer():
    assert Closed() == Closed(closed=(), gone=(), lead_restored=False, warnings=())


def test_a_bad_stored_pane_id_is_a_state_error_naming_source_value_and_backend():
    err = base.bad_pane_id("tmux-pane", "pane-3", "team state codex paneId")
    assert isinstance(err, StateError)
    assert str(err) == (
        "team state codex paneId: 'pane-3' is not a tmux-pane pane id; "
        "the team state was edited by hand or belongs to another backend; fix or remove that paneId"
    )
    assert cli.exit_code_for(err) == 2


def test_a_partial_launch_is_a_process_error_that_still_carries_what_started(tmp_path):
    started = [Launched(_spec(tmp_path), "%5", 42)]
    err = PartialLaunch("tmux started 1 of 2 panes: no space for new pane", started, hint="make the window wider")
    assert isinstance(err, ProcessError)
    assert err.launched == started
    assert str(err) == "tmux started 1 of 2 panes: no space for new pane; make the window wider"
    assert cli.exit_code_for(err) == 2


@pytest.mark.parametrize(("name", "has_panes"), [("tmux-pane", True), ("cmux-pane", True), ("cli-wrapper", False)])
def test_each_real_backend_names_itself_and_says_whether_it_has_panes(name, has_panes):
    kind = BACKENDS[name]
    assert issubclass(kind, Backend)
    assert (kind.name, kind.has_panes) == (name, has_panes)
