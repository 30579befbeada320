"""The cli-wrapper backend: detached background processes, no panes."""

from __future__ import annotations

import os
import sys

import pytest

from fixtures.tmux import reap
from okstra.core.errors import StateError
from okstra.team.backends.base import LaunchSpec
from okstra.team.backends.subprocess import SubprocessBackend


@pytest.fixture(autouse=True)
def no_leftovers(tmp_path):
    yield
    left = reap(str(tmp_path))
    assert not left


def test_a_worker_runs_detached_in_its_own_session_with_no_stdin(tmp_path):
    out = tmp_path / "facts"
    code = (
        f"import os,sys; open({str(out)!r},'w').write(repr((os.getsid(0)==os.getpid(), os.getpgid(0)==os.getpid(), "
        "sys.stdin.read(), os.environ.get('OKSTRA_X')))); print('to stdout'); print('to stderr', file=sys.stderr)"
    )
    b = SubprocessBackend(run_id="r", project_root=tmp_path, env={"OKSTRA_X": "y"})
    done = b.launch(
        [LaunchSpec("w1", 1, (sys.executable, "-c", code, str(tmp_path)), "t", tmp_path / "logs" / "w1.log", tmp_path)]
    )
    assert done[0].pane_id is None and done[0].pid
    os.waitpid(done[0].pid, 0)
    assert out.read_text() == repr((True, True, "", "y"))
    # worker-run logs the provider's output itself; its own stderr is appended to the log.
    assert (tmp_path / "logs" / "w1.log").read_text() == "to stderr\n"


def test_there_is_nothing_to_close(tmp_path):
    b = SubprocessBackend(run_id="r", project_root=tmp_path)
    assert b.close([]).closed == ()
    with pytest.raises(StateError, match="is not a cli-wrapper pane id"):
        b.close(["%1"])
