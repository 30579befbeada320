"""The backend a run's manifest names (DESIGN §6): the one place that branches on `terminalBackend`.

Apart from `base` so the backends import only `base` and nothing imports in a circle.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from okstra.core.errors import StateError
from okstra.model.layout import Run
from okstra.team.backends import cmux, subprocess, tmux
from okstra.team.backends.base import Backend, passed_env

BACKENDS = {
    tmux.TmuxBackend.name: tmux.TmuxBackend,
    cmux.CmuxBackend.name: cmux.CmuxBackend,
    subprocess.SubprocessBackend.name: subprocess.SubprocessBackend,
}


def for_run(run: Run, *, env: Mapping[str, str] | None = None) -> Backend:
    manifest = run.manifest
    chosen = BACKENDS.get(manifest.terminal_backend)
    if chosen is None:
        raise StateError(
            f"run manifest {manifest.run_id}: terminalBackend {manifest.terminal_backend!r} is not known",
            hint="use cli-wrapper, tmux-pane or cmux-pane",
        )
    extra = passed_env(env) if env is not None else passed_env()
    return chosen(run_id=manifest.run_id, project_root=run.root, lead_pane_id=manifest.lead_pane_id, env=extra)


def unusable(name: str, project_root: Path, lead_pane_id: str | None) -> str | None:
    """Why backend `name` cannot work here (no tmux, no cmux, a lead pane not on the server), or None."""
    return BACKENDS[name](run_id="", project_root=Path(project_root), lead_pane_id=lead_pane_id).unusable_here()
