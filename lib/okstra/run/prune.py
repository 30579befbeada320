"""Old runs out of `.okstra/runs/` (runs-prune, docs/DESIGN.md §3).

A run's age counts from the last time anything in its folder changed (a run
the lead still works in is young however early it started). The active run is
never pruned, whatever its age; neither is anything outside `.okstra/runs/`
(sequences, config, the hooks-install record). A run is first renamed out of the
runs' names (`.<run-id>.pruned.tmp`, one atomic step), then removed: a prune killed
midway leaves that hidden folder, never half a run, and the next prune removes it.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from okstra.model import active_run
from okstra.model.layout import for_project

PRUNED = ".pruned.tmp"  # the suffix of a run renamed away to be removed


@dataclass(frozen=True)
class Candidate:
    run_id: str
    path: Path
    age_seconds: float
    size_bytes: int
    pruned: bool

    def to_dict(self, root: Path) -> dict[str, object]:
        return {
            "runId": self.run_id,
            "runDir": self.path.relative_to(root).as_posix(),
            "ageDays": round(self.age_seconds / 86400, 1),
            "bytes": self.size_bytes,
            "pruned": self.pruned,
        }


def _last_change_and_size(folder: Path) -> tuple[float, int]:
    newest = folder.lstat().st_mtime
    size = 0
    for base, dirs, files in os.walk(folder):
        for name in dirs + files:
            info = os.lstat(os.path.join(base, name))
            newest = max(newest, info.st_mtime)
            size += info.st_size if name in files else 0
    return newest, size


def old_runs(root: Path, older_than: float, *, now: float | None = None) -> list[Candidate]:
    """Runs whose folder has not changed for `older_than` seconds, oldest first (none pruned yet)."""
    runs_dir = for_project(root).okstra_dir / "runs"
    if not runs_dir.is_dir():
        return []
    pointer = active_run.load(root)
    active = pointer.run_id if pointer is not None else None
    now = time.time() if now is None else now
    found = []
    for entry in sorted(runs_dir.iterdir()):
        # A dot name is a render-bundle's staging folder or a prune's leftover, not a run.
        if entry.name == active or entry.name.startswith(".") or entry.is_symlink() or not entry.is_dir():
            continue
        newest, size = _last_change_and_size(entry)
        if now - newest >= older_than:
            found.append(Candidate(entry.name, entry, now - newest, size, False))
    return sorted(found, key=lambda c: -c.age_seconds)


def prune(root: Path, older_than: float, *, dry_run: bool = False) -> list[Candidate]:
    """Remove the runs `old_runs` names (nothing with `dry_run`); what was (or would be) removed."""
    done = []
    runs_dir = for_project(root).okstra_dir / "runs"
    if not dry_run and runs_dir.is_dir():
        for leftover in runs_dir.glob(f".*{PRUNED}"):
            shutil.rmtree(leftover, ignore_errors=True)
    for candidate in old_runs(root, older_than):
        if not dry_run:
            doomed = candidate.path.with_name(f".{candidate.run_id}{PRUNED}")
            os.rename(candidate.path, doomed)
            shutil.rmtree(doomed)
        done.append(Candidate(candidate.run_id, candidate.path, candidate.age_seconds, candidate.size_bytes, not dry_run))
    return done
