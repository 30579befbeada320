"""The one git wrapper: what changed since a commit, worktrees, merges (DESIGN §10).

Every call goes through `core.proc` with `git -C <dir>`; output is read in
the NUL-separated forms (`-z`) so no path is ever mangled by quoting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from okstra.core import proc
from okstra.core.errors import InputError, ProcessError, RefusedError
from okstra.core.names import OKSTRA_DIR

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's well-known empty tree: the base of a repo with no commit
_NOT_OKSTRA = f":(exclude,top){OKSTRA_DIR}"  # git never walks okstra's own folder


@dataclass(frozen=True)
class Change:
    """One changed path: `status` is git's letter (A added, M modified, D deleted,
    R renamed, T type change, ? untracked); `old` is the source of a rename."""

    status: str
    path: str
    old: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return {"status": self.status, "path": self.path, "old": self.old}


def _git(cwd: Path | str, *args: str, check: bool = True) -> proc.Completed:
    return proc.run(["git", "-C", str(cwd), *args], check=check)


def is_repo(cwd: Path | str) -> bool:
    return _git(cwd, "rev-parse", "--git-dir", check=False).returncode == 0


def head(cwd: Path | str) -> str | None:
    """The commit checked out in `cwd`, or None in a repository with no commit yet."""
    done = _git(cwd, "rev-parse", "--verify", "-q", "HEAD^{commit}", check=False)
    return done.stdout.strip() or None


def tracked_changes(cwd: Path | str) -> list[str]:
    """Tracked paths with uncommitted changes, staged or not (untracked files are not listed);
    refused when `cwd` is not a git working tree."""
    done = _git(cwd, "status", "--porcelain=v1", "-z", "--untracked-files=no", check=False)
    if done.returncode != 0:
        raise RefusedError(f"cannot read the working tree of {cwd} with git: {done.stderr.strip() or done.returncode}")
    fields, found = done.stdout.split("\x00"), []
    i = 0
    while i < len(fields):
        entry = fields[i]
        if len(entry) > 3:
            found.append(entry[3:])
            i += 1 if entry[0] not in "RC" else 2  # a rename's source follows it
        else:
            i += 1
    return [path for path in found if not _excluded(path)]


def commit_of(cwd: Path | str, rev: str, source: str) -> str:
    """`rev` as a full commit id; refused when the repository has no such commit."""
    if rev.startswith("-") or "\x00" in rev:
        raise InputError(f"{source}: {rev[:60]!r} is not a commit")
    done = _git(cwd, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}", check=False)
    if done.returncode != 0:
        raise InputError(f"{source}: {rev[:60]!r} is not a commit of {cwd}", hint="give a commit id from git log")
    return done.stdout.strip()


def _excluded(path: str) -> bool:
    return path == OKSTRA_DIR or path.startswith(OKSTRA_DIR + "/")


def changes(cwd: Path | str, base: str | None) -> list[Change]:
    """Every path changed in the work tree of `cwd` since `base` (committed, staged,
    unstaged and untracked; renames and deletions included), `.okstra/` left out.
    `base` None: the empty tree (everything present counts as added)."""
    diff = _git(cwd, "diff", "--name-status", "-z", "-M", "--no-ext-diff", base or EMPTY_TREE, "--", ".", _NOT_OKSTRA).stdout
    fields = diff.split("\x00")
    found: list[Change] = []
    i = 0
    while i < len(fields) - 1:
        status = fields[i]
        letter = status[:1]
        if letter in "RC":
            old, new = fields[i + 1], fields[i + 2]
            i += 3
            if not _excluded(new) or not _excluded(old):
                found.append(Change("R" if letter == "R" else "A", new, old if letter == "R" else None))
            continue
        path = fields[i + 1]
        i += 2
        if not _excluded(path):
            found.append(Change(letter, path))
    untracked = _git(cwd, "ls-files", "-z", "--others", "--exclude-standard", "--", ".", _NOT_OKSTRA).stdout
    found += [Change("?", p) for p in untracked.split("\x00") if p and not _excluded(p)]
    return found


# ---------------------------------------------------------------- worktrees


@dataclass(frozen=True)
class Worktree:
    path: str
    head: str | None
    branch: str | None  # short name, e.g. okstra/<run>/<worker>; None when detached


def worktrees(cwd: Path | str) -> list[Worktree]:
    out = _git(cwd, "worktree", "list", "--porcelain", "-z").stdout
    found: list[Worktree] = []
    path = head_ = branch = None
    for field in [*out.split("\x00"), ""]:
        if not field:
            if path is not None:
                found.append(Worktree(path, head_, branch))
            path = head_ = branch = None
            continue
        key, _, value = field.partition(" ")
        if key == "worktree":
            path = value
        elif key == "HEAD":
            head_ = value
        elif key == "branch":
            branch = value.removeprefix("refs/heads/")
    return found


def branch_exists(cwd: Path | str, branch: str) -> bool:
    return _git(cwd, "show-ref", "--verify", "-q", f"refs/heads/{branch}", check=False).returncode == 0


def check_branch_name(cwd: Path | str, branch: str) -> str:
    if _git(cwd, "check-ref-format", "--branch", branch, check=False).returncode != 0:
        raise InputError(f"{branch!r} is not a valid branch name")
    return branch


def add_worktree(cwd: Path | str, path: Path, branch: str, base: str) -> None:
    check_branch_name(cwd, branch)
    if branch_exists(cwd, branch):
        raise RefusedError(f"branch {branch} already exists", hint="okstra creates a fresh branch per run and worker")
    _git(cwd, "worktree", "add", "-q", "-b", branch, str(path), base)


def remove_worktree(cwd: Path | str, path: str) -> None:
    _git(cwd, "worktree", "remove", "--force", path)


def delete_branch(cwd: Path | str, branch: str) -> None:
    _git(cwd, "branch", "-q", "-D", branch)


def is_ancestor(cwd: Path | str, commit: str, of: str) -> bool:
    return _git(cwd, "merge-base", "--is-ancestor", commit, of, check=False).returncode == 0


def commit_all(cwd: Path | str, message: str, identity: Sequence[str] = ()) -> str | None:
    """Commit everything in the work tree of `cwd` (okstra's own folder left out);
    the new head, or None when there was nothing to commit."""
    _git(cwd, "add", "-A", "--", ".", f":(exclude){OKSTRA_DIR}")
    if _git(cwd, "diff", "--cached", "--quiet", check=False).returncode == 0:
        return None
    _git(cwd, *identity, "commit", "-q", "--no-verify", "-m", message)
    return head(cwd)


@dataclass(frozen=True)
class MergeResult:
    how: str  # "fast-forward" | "merge-commit" | "up-to-date"
    head: str | None


def merge(cwd: Path | str, branch: str, message: str, identity: Sequence[str] = ()) -> MergeResult:
    """Merge `branch` into what `cwd` has checked out: fast-forward when possible, else a
    merge commit. On a conflict the merge is aborted (the work tree is as before) and
    RefusedError lists every conflicting path."""
    tip = commit_of(cwd, branch, "branch")
    current = head(cwd)
    if current is not None and is_ancestor(cwd, tip, current):
        return MergeResult("up-to-date", current)
    if current is None or is_ancestor(cwd, current, tip):
        _git(cwd, "merge", "-q", "--ff-only", branch)
        return MergeResult("fast-forward", head(cwd))
    done = _git(cwd, *identity, "merge", "-q", "--no-ff", "--no-edit", "-m", message, branch, check=False)
    if done.returncode == 0:
        return MergeResult("merge-commit", head(cwd))
    conflicts = [p for p in _git(cwd, "diff", "--name-only", "-z", "--diff-filter=U").stdout.split("\x00") if p]
    _git(cwd, "merge", "--abort", check=False)
    if not conflicts:
        last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise ProcessError(f"git merge {branch} failed: {last}")
    raise MergeConflict(branch, conflicts)


class MergeConflict(RefusedError):
    """A merge that would conflict: aborted, nothing changed; `paths` lists the conflicts."""

    def __init__(self, branch: str, conflicts: list[str]) -> None:
        self.branch = branch
        self.paths = list(conflicts)
        super().__init__(
            f"merging {branch} conflicts in {len(conflicts)} path(s): {', '.join(conflicts)}",
            hint="the merge was aborted and nothing changed; resolve it by hand or re-run that stage",
        )
