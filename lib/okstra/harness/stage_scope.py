"""The approved stage's scope, checked after the fact against git (DESIGN §10).

The write-guard hook stops a Claude worker before it writes; a Codex, Gemini,
Grok or Kimi worker runs no Claude hook. So the scope is also checked on what
really changed: every path changed in a work tree since the stage's base
commit (`core.git.changes`: committed, staged, unstaged, untracked, renames and
deletions; `.okstra/` left out) is judged with the write-guard's own matcher
(`write_guard.planned_matcher`, one set of glob rules):

- a path written by the lead, an implementer, or no known worker must be
  covered by the stage's planned paths (a rename: both names);
- a path written by any other worker (analyst, verifier, critic, ...) must be
  inside that worker's own result file or evidence folder.

Who wrote a path is known from the record `worker-run` keeps per dispatch: a
snapshot of the changed paths (git status letter, size, mtime) when it
started, compared with the changes when it ended (`begin()` / `finish()`).
In an isolated run each implementer has its own worktree, so every change
there is that worker's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra.core import fsio, git
from okstra.core.clock import now_iso
from okstra.harness.write_guard import planned_matcher
from okstra.model import roles
from okstra.model.active_run import ApprovedStage

IN_SCOPE = "in-scope"
OUT_OF_SCOPE = "out-of-scope"
NOT_CHECKED = "not-checked"
RECORD_VERSION = "1.0"


@dataclass(frozen=True)
class Writer:
    """A worker that may have written a path, and what it may write."""

    worker_id: str
    role: str
    result: str | None = None  # absolute
    evidence: str | None = None  # absolute

    @property
    def stage_writer(self) -> bool:
        return roles.write_scope(self.role) == roles.SCOPE_STAGE


@dataclass(frozen=True)
class PathVerdict:
    change: git.Change
    in_scope: bool
    worker: str | None
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {**self.change.to_dict(), "inScope": self.in_scope, "worker": self.worker, "why": self.why}


@dataclass(frozen=True)
class ScopeVerdict:
    tree: str  # project-relative work tree ("." for the project itself)
    base: str | None
    stage: int | None
    paths: tuple[PathVerdict, ...]

    @property
    def out_of_scope(self) -> tuple[PathVerdict, ...]:
        return tuple(p for p in self.paths if not p.in_scope)

    @property
    def ok(self) -> bool:
        return not self.out_of_scope

    def to_dict(self) -> dict[str, Any]:
        return {
            "tree": self.tree,
            "base": self.base,
            "stage": self.stage,
            "verdict": IN_SCOPE if self.ok else OUT_OF_SCOPE,
            "changed": len(self.paths),
            "outOfScope": [p.to_dict() for p in self.out_of_scope],
            "paths": [p.to_dict() for p in self.paths],
        }


def _inside(path: str, folder: str | None) -> bool:
    return folder is not None and (path == folder or path.startswith(folder.rstrip("/") + "/"))


def judge(
    root: Path,
    changes: Iterable[git.Change],
    stage: ApprovedStage | None,
    writers: Mapping[str, Writer],
    *,
    tree: Path | None = None,
    base: str | None = None,
    default: Writer | None = None,
) -> ScopeVerdict:
    """Each change against the allowance of the worker that wrote it (`writers` by
    path, else `default`, else the lead). Planned paths are project-relative, so a
    change in a worktree is judged as the same path in the project."""
    top = str(Path(root).resolve())
    planned = planned_matcher(stage.planned_paths if stage else (), top)
    stage_name = f"stage {stage.number}'s planned paths" if stage else "no approved stage"
    verdicts = []
    for change in changes:
        writer = writers.get(change.path) or default
        names = [change.path] + ([change.old] if change.old else [])
        if writer is not None and not writer.stage_writer:
            absolute = [str(Path(tree or root, n)) for n in names]
            ok = all(_inside(a, writer.result) or _inside(a, writer.evidence) for a in absolute)
            why = f"a {writer.role} worker may write only its own result and evidence"
        elif stage is None:
            ok, why = writer is None, "no approved stage: an implementer has no scope to write in"
        else:
            ok = all(planned.covers(f"{top}/{n}") for n in names)
            why = stage_name
        verdicts.append(PathVerdict(change, ok, writer.worker_id if writer else None, why))
    shown = "." if tree is None or Path(tree).resolve() == Path(top) else os.path.relpath(Path(tree).resolve(), top)
    return ScopeVerdict(shown, base, stage.number if stage else None, tuple(verdicts))


# ---------------------------------------------------------------- who wrote what


def _fingerprint(tree: Path, change: git.Change) -> list[Any]:
    try:
        info = os.lstat(Path(tree, change.path))
    except OSError:
        return [change.status, None, None]
    return [change.status, info.st_size, info.st_mtime_ns]


def snapshot(tree: Path, base: str | None) -> dict[str, list[Any]]:
    """The changed paths of `tree` since `base`, each with its git letter, size and mtime."""
    return {c.path: _fingerprint(tree, c) for c in git.changes(tree, base)}


def begin(record_path: Path, tree: Path, base: str | None, writer: Writer) -> None:
    """Before a worker runs: what was already changed (so it is not blamed on it)."""
    fsio.write_json(
        record_path,
        {
            "schemaVersion": RECORD_VERSION,
            "workerId": writer.worker_id,
            "role": writer.role,
            "tree": str(tree),
            "base": base,
            "startedAt": now_iso(),
            "before": snapshot(tree, base),
        },
    )


def finish(
    record_path: Path, root: Path, stage: ApprovedStage | None, writer: Writer, *, own_tree: bool = False
) -> ScopeVerdict | None:
    """After a worker ran: the paths it changed, judged against its allowance and
    recorded; None when `begin` recorded nothing to compare with."""
    if not record_path.exists():
        return None
    record = fsio.read_json(record_path, what="scope record")
    tree = Path(record["tree"])
    base = record.get("base")
    before = record.get("before") or {}
    now = git.changes(tree, base)
    written = [c for c in now if own_tree or before.get(c.path) != _fingerprint(tree, c)]
    verdict = judge(root, written, stage, {c.path: writer for c in written}, tree=tree, base=base)
    record.update({"finishedAt": now_iso(), "written": [c.to_dict() for c in written], "verdict": verdict.to_dict()})
    record.pop("before", None)
    fsio.write_json(record_path, record)
    return verdict


def written_by(records: Sequence[tuple[Writer, Path]]) -> dict[str, Writer]:
    """Path -> the worker whose recorded run first wrote it (records in dispatch order)."""
    found: dict[str, Writer] = {}
    for writer, path in records:
        if not path.exists():
            continue
        doc = fsio.read_json(path, what="scope record")
        for change in doc.get("written") or ():
            if isinstance(change, Mapping) and isinstance(change.get("path"), str):
                found.setdefault(change["path"], writer)
    return found


def check(
    root: Path,
    stage: ApprovedStage,
    *,
    tree: Path | None = None,
    base: str | None = None,
    writers: Mapping[str, Writer] | None = None,
    default: Writer | None = None,
) -> ScopeVerdict:
    """`stage-check` for one work tree: every change since `base` (the stage's base by default)."""
    tree = Path(tree or root)
    base = base if base is not None else stage.base_commit
    return judge(root, git.changes(tree, base), stage, writers or {}, tree=tree, base=base, default=default)
