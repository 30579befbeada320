"""okstra.console: a pip/pipx/uv console script runs the same door file install.sh installs."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from okstra import __version__, console
from okstra.core import cli

REPO = Path(__file__).resolve().parents[2]


def _script(attr: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """What a console script does: import okstra.console, call the attribute, with argv as given."""
    code = f"import sys; sys.argv[1:] = {list(args)!r}; from okstra import console; console.{attr}()"
    return subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(REPO / "lib"), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_every_console_script_of_the_project_resolves_to_a_runner():
    # test_meta checks the [project.scripts] table against bin/; this checks console answers each.
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert len(scripts) >= 20
    for target in scripts.values():
        module, attr = target.split(":")
        assert module == "okstra.console"
        assert callable(getattr(console, attr)), attr


def test_a_script_prints_its_doors_version_under_the_doors_name():
    done = _script("team_reclaim", "--version")
    assert (done.returncode, done.stdout, done.stderr) == (0, f"team-reclaim (okstra {__version__})\n", "")


def test_a_script_prints_its_doors_docstring_as_help():
    done = _script("worker_wait", "--help")
    assert done.returncode == 0
    assert done.stdout == cli.doc_of_file(cli.BIN_DIR / "worker-wait").rstrip("\n") + "\n"


def test_a_scripts_errors_are_the_doors_one_line_and_exit_code(project):
    done = _script("team_status", "--no-such-option", cwd=project)
    assert done.returncode == 2
    assert done.stderr == "team-status: unrecognized arguments: --no-such-option; see 'team-status --help'\n"


@pytest.mark.parametrize("attr", ["no_such_command", "_door_of_nothing", "__wrapped__"])
def test_a_name_without_a_door_is_no_attribute(attr):
    with pytest.raises(AttributeError, match=rf"^okstra.console has no command '{attr}'$"):
        getattr(console, attr)
