"""core.git on real repositories: what changed since a commit, worktrees, merges."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from okstra.core import git
from okstra.core.errors import InputError, RefusedError

ID = ("-c", "user.name=t", "-c", "user.email=t@example.com")


def sh(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *ID, *args], check=True, capture_output=True, text=True).stdout


def commit(root: Path, files: dict[str, str], message: str = "c") -> str:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", message)
    return sh(root, "rev-parse", "HEAD").strip()


def test_changes_cover_commits_edits_deletions_renames_and_untracked_but_not_okstra(project):
    base = commit(project, {"a.py": "a\n" * 20, "b.py": "b\n", "c.py": "c\n"})
    commit(project, {"d.py": "d\n"})  # committed after the base
    (project / "b.py").write_text("changed\n")
    (project / "c.py").unlink()
    sh(project, "mv", "a.py", "moved.py")
    (project / "new file with spaces.txt").write_text("x\n")
    (project / ".okstra" / "runs").mkdir(parents=True)
    (project / ".okstra" / "runs" / "x.json").write_text("{}")
    found = {(c.status, c.path, c.old) for c in git.changes(project, base)}
    assert found == {
        ("A", "d.py", None),
        ("M", "b.py", None),
        ("D", "c.py", None),
        ("R", "moved.py", "a.py"),
        ("?", "new file with spaces.txt", None),
    }


def test_changes_without_a_base_count_everything_as_added(project):
    (project / "x").write_text("x")
    assert [(c.status, c.path) for c in git.changes(project, None)] == [("?", "x")]


def test_a_bad_commit_is_refused_as_input(project):
    commit(project, {"a": "a"})
    with pytest.raises(InputError):
        git.commit_of(project, "--output=/tmp/x", "--base")
    with pytest.raises(InputError):
        git.commit_of(project, "nope", "--base")


def test_merge_fast_forwards_then_refuses_a_conflict_listing_the_path_and_leaves_the_tree_as_it_was(project):
    base = commit(project, {"f.txt": "one\n"})
    sh(project, "branch", "left", base)
    sh(project, "branch", "right", base)
    sh(project, "checkout", "-q", "left")
    commit(project, {"f.txt": "left\n"})
    sh(project, "checkout", "-q", "right")
    commit(project, {"f.txt": "right\n"})
    sh(project, "checkout", "-q", "-b", "target", base)
    assert git.merge(project, "left", "m", ID).how == "fast-forward"
    with pytest.raises(RefusedError, match=r"merging right conflicts in 1 path\(s\): f.txt"):
        git.merge(project, "right", "m", ID)
    assert (project / "f.txt").read_text() == "left\n"
    assert sh(project, "status", "--porcelain") == ""


def test_worktrees_are_listed_with_their_branch(project):
    base = commit(project, {"f": "1"})
    git.add_worktree(project, project.parent / "wt", "okstra/r/w", base)
    listed = {(w.path, w.branch) for w in git.worktrees(project)}
    assert (str(project.parent / "wt"), "okstra/r/w") in listed
    with pytest.raises(RefusedError):
        git.add_worktree(project, project.parent / "wt2", "okstra/r/w", base)
