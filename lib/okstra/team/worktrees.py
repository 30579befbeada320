"""Worktree isolation (`render-bundle --isolate worktree`, DESIGN §6).

Each implementer of an isolated run works in its own `git worktree`
(`RunLayout.worktree_dir(worker)`) on a fresh branch named after the run and
the worker (`RunLayout.worktree_branch`), started from the stage's base
commit. The run's `worktrees.json` records the isolation and every worktree
okstra created; teardown removes only worktrees listed there that git still
knows at that path on that branch (never one it did not create), and keeps a
branch that holds work not merged into the project's checked-out branch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra.core import fsio, git, paths
from okstra.core.clock import now_iso
from okstra.core.errors import RefusedError, StateError
from okstra.model.layout import RunLayout

ISOLATION = "worktree"
ISOLATIONS = (ISOLATION,)
STAGE_WRITERS = frozenset({"implementer", "executor"})
# okstra commits a worker's uncommitted edits on the worker's own branch under its own name,
# so the user's git identity is never needed (and never borrowed) for it.
IDENTITY = ("-c", "user.name=okstra", "-c", "user.email=okstra@localhost")


@dataclass(frozen=True)
class Entry:
    worker_id: str
    path: str  # project-relative
    branch: str
    base: str | None
    created_at: str
    merged_at: str | None = None
    merged_as: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "workerId": self.worker_id,
            "path": self.path,
            "branch": self.branch,
            "base": self.base,
            "createdAt": self.created_at,
            "mergedAt": self.merged_at,
            "mergedAs": self.merged_as,
        }

    @classmethod
    def from_dict(cls, raw: Any, source: str) -> Entry:
        try:
            return cls(
                str(raw["workerId"]),
                str(raw["path"]),
                str(raw["branch"]),
                raw.get("base"),
                str(raw["createdAt"]),
                raw.get("mergedAt"),
                raw.get("mergedAs"),
            )
        except (KeyError, TypeError, AttributeError):
            raise StateError(f"{source}: a worktree entry lacks workerId, path, branch or createdAt") from None


def _default() -> dict[str, Any]:
    return {"schemaVersion": "1.0", "isolation": ISOLATION, "worktrees": []}


def enable(layout: RunLayout) -> None:
    """Mark a new run as isolated (render-bundle); worktrees are made at dispatch."""
    fsio.write_json(layout.worktrees, _default())


def isolated(layout: RunLayout) -> bool:
    return layout.worktrees.exists()


def entries(layout: RunLayout) -> list[Entry]:
    if not layout.worktrees.exists():
        return []
    doc = fsio.read_json(layout.worktrees, what="worktrees file")
    raw = doc.get("worktrees") if isinstance(doc, dict) else None
    if not isinstance(raw, list):
        raise StateError(f"{layout.worktrees}: worktrees must be a list")
    return [Entry.from_dict(e, str(layout.worktrees)) for e in raw]


def entry(layout: RunLayout, worker_id: str) -> Entry | None:
    return next((e for e in entries(layout) if e.worker_id == worker_id), None)


def tree_of(layout: RunLayout, worker_id: str) -> Path | None:
    """The worktree a worker runs in, or None (not isolated, or not created yet)."""
    found = entry(layout, worker_id)
    if found is None:
        return None
    return paths.resolve_inside(layout.project_root, found.path, source=f"{layout.worktrees}: {worker_id} path")


def prepare(layout: RunLayout, workers: list[tuple[str, str]], base: str | None) -> list[Entry]:
    """A worktree for each (worker id, role) that writes the stage, when the run is isolated."""
    if not isolated(layout):
        return []
    root = layout.project_root
    made: list[Entry] = []
    for worker_id, role in workers:
        if role not in STAGE_WRITERS or entry(layout, worker_id) is not None:
            continue
        if git.head(root) is None:
            raise RefusedError(f"{root} has no commit to start a worktree from", hint="commit once, then dispatch")
        start = base or git.head(root)
        path = layout.worktree_dir(worker_id)
        if path.exists():
            raise RefusedError(f"{layout.relative(path)} already exists and is not a worktree okstra recorded")
        path.parent.mkdir(parents=True, exist_ok=True)
        branch = layout.worktree_branch(worker_id)
        git.add_worktree(root, path, branch, start)
        new = Entry(worker_id, layout.relative(path), branch, start, now_iso())

        def add(doc: dict[str, Any], new: Entry = new) -> bool:
            doc.setdefault("worktrees", []).append(new.to_dict())
            return True

        fsio.update_json(layout.worktrees, add, default=_default)
        made.append(new)
    return made


def _set(layout: RunLayout, worker_id: str, **fields: Any) -> None:
    def change(doc: dict[str, Any]) -> bool:
        for raw in doc.get("worktrees", []):
            if raw.get("workerId") == worker_id:
                raw.update(fields)
        return True

    fsio.update_json(layout.worktrees, change, default=_default)


def _registered(root: Path, found: Entry) -> bool:
    """Git knows a worktree at exactly this path on exactly this branch."""
    want = str(paths.resolve_inside(root, found.path, source="worktree path"))
    return any(w.path == want and w.branch == found.branch for w in git.worktrees(root))


def save_work(layout: RunLayout, found: Entry) -> str | None:
    """Commit what the worker left uncommitted in its worktree, on its own branch."""
    tree = paths.resolve_inside(layout.project_root, found.path, source="worktree path")
    if not tree.is_dir():
        return None
    return git.commit_all(tree, f"okstra: {found.worker_id} work in {layout.run_id}", IDENTITY)


@dataclass(frozen=True)
class Merged:
    worker_id: str
    branch: str
    how: str
    head: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"workerId": self.worker_id, "branch": self.branch, "how": self.how, "head": self.head}


def merge(layout: RunLayout, worker_id: str) -> Merged:
    """Bring a worker's branch into the project's checked-out branch (fast-forward, else a
    merge commit); a conflict aborts the merge and is refused with the conflicting paths."""
    found = entry(layout, worker_id)
    if found is None:
        raise RefusedError(f"{worker_id} has no worktree in run {layout.run_id}", hint="see worktrees.json of the run")
    save_work(layout, found)
    result = git.merge(layout.project_root, found.branch, f"okstra: merge {found.branch}", IDENTITY)
    _set(layout, worker_id, mergedAt=now_iso(), mergedAs=result.how)
    return Merged(worker_id, found.branch, result.how, result.head)


@dataclass(frozen=True)
class Removed:
    worker_id: str
    path: str
    removed: bool
    branch: str
    branch_kept: bool
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "workerId": self.worker_id,
            "path": self.path,
            "removed": self.removed,
            "branch": self.branch,
            "branchKept": self.branch_kept,
            "note": self.note,
        }


def teardown(layout: RunLayout) -> list[Removed]:
    """Remove the worktrees this run created; keep branches holding unmerged work."""
    root = layout.project_root
    out: list[Removed] = []
    for found in entries(layout):
        if not _registered(root, found):
            note = "not a worktree okstra created at that path any more: left alone"
            out.append(Removed(found.worker_id, found.path, False, found.branch, git.branch_exists(root, found.branch), note))
            continue
        save_work(layout, found)
        git.remove_worktree(root, str(paths.resolve_inside(root, found.path, source="worktree path")))
        head = git.head(root)
        tip = git.commit_of(root, found.branch, "branch") if git.branch_exists(root, found.branch) else None
        if tip is None:
            out.append(Removed(found.worker_id, found.path, True, found.branch, False, "branch already gone"))
        elif head is not None and git.is_ancestor(root, tip, head):
            git.delete_branch(root, found.branch)
            out.append(Removed(found.worker_id, found.path, True, found.branch, False, "merged: branch deleted"))
        else:
            note = f"branch {found.branch} kept: it holds work not merged into the checked-out branch"
            out.append(Removed(found.worker_id, found.path, True, found.branch, True, note))
    return out
