"""Shared pytest fixtures: every test gets its own HOME, OKSTRA_ROOT and project."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / "bin"
sys.path.insert(0, str(REPO / "lib"))


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import os

    for name in list(os.environ):
        if name.startswith(("OKSTRA_", "CLAUDE_")) or name in {"CLAUDECODE", "XDG_DOWNLOAD_DIR", "TMUX", "TMUX_PANE"}:
            monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OKSTRA_ROOT", str(home / ".okstra"))
    return home


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throw-away git project, and the current directory inside it."""
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.chdir(root)
    return root.resolve()


def run_bin(name: str, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, input: str | None = None):
    """Run `bin/<name>` as a user would, with this interpreter."""
    return subprocess.run(
        [sys.executable, str(BIN / name), *args],
        cwd=cwd,
        env=env,
        input=input,
        capture_output=True,
        text=True,
        timeout=120,
    )


def tree_snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` with its bytes: compare before/after a refused command."""
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
