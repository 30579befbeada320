"""The run a team command works on: `--run-manifest PATH`, else the project's active run.

`open_run()` resolves and loads everything once (project root, layout,
manifest, team-state path, backend) so dispatch, reclaim, teardown and status
start from the same facts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from okstra.core import paths
from okstra.core.errors import StateError
from okstra.model import run_manifest, team_state
from okstra.model.run_manifest import RunManifest
from okstra.run.layout import RunLayout, locate_run
from okstra.team.backends import base


@dataclass(frozen=True)
class Run:
    root: Path
    layout: RunLayout
    manifest_path: Path
    manifest: RunManifest
    team_state_path: Path

    def backend(self, env: Mapping[str, str] | None = None) -> base.Backend:
        return base.for_manifest(self.manifest, self.root, env=env)

    def state(self) -> team_state.TeamState:
        return team_state.load(self.team_state_path)

    def resolve(self, value: str, source: str) -> Path:
        return paths.resolve_inside(self.root, value, source=source)


def open_run(manifest: str | None, *, cwd: Path | None = None) -> Run:
    """The run named by `--run-manifest`, else the active run of the project around `cwd`."""
    root, manifest_path = locate_run(manifest, cwd=cwd)
    loaded = run_manifest.load(manifest_path)
    layout = RunLayout(root, loaded.run_id)
    if layout.manifest != manifest_path:
        raise StateError(f"{manifest_path}: runId {loaded.run_id!r} does not match its folder {manifest_path.parent.name!r}")
    state_path = paths.resolve_inside(root, loaded.team_state_path, source=f"{manifest_path}: teamStatePath")
    return Run(root, layout, manifest_path, loaded, state_path)
