"""team.worktrees: one git worktree per isolated implementer, removed at teardown only when okstra made it (DESIGN §6).

Every test works on a real repository (`git init` in tmp_path, a first commit) and real git worktrees.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from fixtures.runs import make_run
from okstra.core import git
from okstra.core.errors import InputError, PathEscapeError, RefusedError, StateError
from okstra.core.git import MergeConflict
from okstra.team import worktrees

USER = ("-c", "user.name=Test User", "-c", "user.email=user@example.com")
WORKERS = [("claude-implementer", "implementer"), ("codex-analyst", "analyst")]


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *USER, *args], check=True, capture_output=True, text=True).stdout.strip()


def _commit(root: Path, name: str, text: str, message: str) -> str:
    (root / name).write_text(text, encoding="utf-8")
    _git(root, "add", name)
    _git(root, "commit", "-q", "-m", message)
    return _git(root, "rev-parse", "HEAD")


@pytest.fixture
def repo(project):
    _git(project, "checkout", "-q", "-b", "main")
    _commit(project, "app.py", "print('v1')\n", "first")
    (project / ".git" / "info" / "exclude").write_text(".okstra/\n", encoding="utf-8")
    return project


@pytest.fixture
def layout(repo):
    made, _ = make_run(repo, [{"provider": "claude", "role": "implementer"}, "codex"])
    return made


@pytest.fixture
def isolated(layout):
    worktrees.enable(layout)
    return layout


def _listed(root: Path) -> dict[str, str | None]:
    return {w.path: w.branch for w in git.worktrees(root)}


def test_a_run_is_not_isolated_until_enabled_and_then_lists_no_worktree(layout):
    assert not worktrees.isolated(layout)
    assert worktrees.entries(layout) == []
    worktrees.enable(layout)
    assert worktrees.isolated(layout)
    assert json.loads(layout.worktrees.read_text(encoding="utf-8")) == {
        "schemaVersion": "1.0",
        "isolation": "worktree",
        "worktrees": [],
    }
    assert worktrees.entries(layout) == []


def test_a_run_that_is_not_isolated_makes_no_worktree(layout, repo):
    assert worktrees.prepare(layout, WORKERS, None) == []
    assert not layout.worktrees.exists()
    assert list(_listed(repo)) == [str(repo)]


def test_each_stage_writer_gets_its_own_worktree_on_a_fresh_branch_from_head(isolated, repo):
    head = git.head(repo)
    made = worktrees.prepare(isolated, [*WORKERS, ("grok-executor", "executor")], None)
    assert [e.worker_id for e in made] == ["claude-implementer", "grok-executor"]
    for entry in made:
        tree = isolated.worktree_dir(entry.worker_id)
        assert entry.path == isolated.relative(tree)
        assert entry.branch == f"okstra/{isolated.run_id}/{entry.worker_id}" == isolated.worktree_branch(entry.worker_id)
        assert entry.base == head
        assert _listed(repo)[str(tree)] == entry.branch
        assert _git(tree, "rev-parse", "HEAD") == head
        assert (tree / "app.py").read_text(encoding="utf-8") == "print('v1')\n"
        assert worktrees.tree_of(isolated, entry.worker_id) == tree
    assert worktrees.entries(isolated) == made
    assert worktrees.tree_of(isolated, "codex-analyst") is None


def test_a_worktree_starts_from_the_stages_base_commit_when_given(isolated, repo):
    base = git.head(repo)
    _commit(repo, "app.py", "print('v2')\n", "second")
    (entry,) = worktrees.prepare(isolated, WORKERS, base)
    tree = isolated.worktree_dir("claude-implementer")
    assert entry.base == base
    assert (tree / "app.py").read_text(encoding="utf-8") == "print('v1')\n"


def test_preparing_again_makes_nothing_more(isolated, repo):
    first = worktrees.prepare(isolated, WORKERS, None)
    assert worktrees.prepare(isolated, WORKERS, None) == []
    assert worktrees.entries(isolated) == first
    assert len(_listed(repo)) == 2


def test_a_project_without_a_commit_is_refused_and_nothing_is_recorded(project):
    layout, _ = make_run(project, [{"provider": "claude", "role": "implementer"}])
    worktrees.enable(layout)
    with pytest.raises(RefusedError) as refused:
        worktrees.prepare(layout, [("claude-implementer", "implementer")], None)
    assert str(refused.value) == f"{project} has no commit to start a worktree from; commit once, then dispatch"
    assert worktrees.entries(layout) == []


def test_a_folder_already_where_the_worktree_goes_is_refused_and_left_alone(isolated, repo):
    tree = isolated.worktree_dir("claude-implementer")
    tree.mkdir(parents=True)
    (tree / "mine.txt").write_text("the user's\n", encoding="utf-8")
    with pytest.raises(RefusedError) as refused:
        worktrees.prepare(isolated, WORKERS, None)
    assert str(refused.value) == f"{isolated.relative(tree)} already exists and is not a worktree okstra recorded"
    assert [p.name for p in tree.iterdir()] == ["mine.txt"]
    assert worktrees.entries(isolated) == [] and list(_listed(repo)) == [str(repo)]


def test_a_branch_that_already_exists_is_refused_not_reused(isolated, repo):
    branch = isolated.worktree_branch("claude-implementer")
    _git(repo, "branch", branch)
    with pytest.raises(RefusedError, match=rf"^branch {branch} already exists; okstra creates a fresh branch"):
        worktrees.prepare(isolated, WORKERS, None)
    assert worktrees.entries(isolated) == []


def test_a_recorded_path_outside_the_project_is_refused(isolated, tmp_path):
    doc = json.loads(isolated.worktrees.read_text(encoding="utf-8"))
    doc["worktrees"].append(
        {"workerId": "claude-implementer", "path": "../elsewhere", "branch": "b", "base": None, "createdAt": "x"}
    )
    isolated.worktrees.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(PathEscapeError):
        worktrees.tree_of(isolated, "claude-implementer")


def test_a_worktrees_file_without_a_list_is_refused(isolated):
    isolated.worktrees.write_text('{"worktrees": {}}', encoding="utf-8")
    with pytest.raises(StateError) as refused:
        worktrees.entries(isolated)
    assert str(refused.value) == f"{isolated.worktrees}: worktrees must be a list"


def test_a_worktree_entry_lacking_its_fields_is_refused(isolated):
    isolated.worktrees.write_text('{"worktrees": [{"workerId": "w", "path": "p"}]}', encoding="utf-8")
    with pytest.raises(StateError) as refused:
        worktrees.entries(isolated)
    assert str(refused.value) == f"{isolated.worktrees}: a worktree entry lacks workerId, path, branch or createdAt"


def test_a_torn_worktrees_file_is_refused_naming_it(isolated):
    isolated.worktrees.write_text('{"worktrees": [', encoding="utf-8")
    with pytest.raises(InputError, match=rf"^{isolated.worktrees}: not valid JSON"):
        worktrees.entries(isolated)


def test_an_entry_round_trips_through_its_stored_form(isolated):
    (entry,) = worktrees.prepare(isolated, WORKERS, None)
    assert worktrees.Entry.from_dict(entry.to_dict(), "x") == entry
    assert set(entry.to_dict()) == {"workerId", "path", "branch", "base", "createdAt", "mergedAt", "mergedAs"}


def test_teardown_removes_an_untouched_worktree_and_its_branch(isolated, repo):
    worktrees.prepare(isolated, WORKERS, None)
    (removed,) = worktrees.teardown(isolated)
    assert (removed.worker_id, removed.removed, removed.branch_kept, removed.note) == (
        "claude-implementer",
        True,
        False,
        "merged: branch deleted",
    )
    assert not isolated.worktree_dir("claude-implementer").exists()
    assert list(_listed(repo)) == [str(repo)]
    assert not git.branch_exists(repo, removed.branch)


def test_teardown_commits_a_workers_leftover_edits_and_keeps_their_branch(isolated, repo):
    worktrees.prepare(isolated, WORKERS, None)
    tree = isolated.worktree_dir("claude-implementer")
    (tree / "app.py").write_text("print('v2 by the worker')\n", encoding="utf-8")
    (tree / "new.py").write_text("x = 1\n", encoding="utf-8")
    (removed,) = worktrees.teardown(isolated)
    assert (removed.removed, removed.branch_kept) == (True, True)
    assert removed.note == f"branch {removed.branch} kept: it holds work not merged into the checked-out branch"
    assert not tree.exists()
    assert _git(repo, "show", f"{removed.branch}:app.py") == "print('v2 by the worker')"
    assert _git(repo, "show", f"{removed.branch}:new.py") == "x = 1"
    assert _git(repo, "log", "-1", "--format=%an <%ae>|%s", removed.branch) == (
        f"okstra <okstra@localhost>|okstra: claude-implementer work in {isolated.run_id}"
    )
    assert (repo / "app.py").read_text(encoding="utf-8") == "print('v1')\n"


def test_teardown_leaves_alone_a_worktree_okstra_did_not_create_at_the_recorded_path(isolated, repo):
    (entry,) = worktrees.prepare(isolated, WORKERS, None)
    tree = isolated.worktree_dir("claude-implementer")
    # The user replaced it: same path, their own branch.
    _git(repo, "worktree", "remove", "--force", str(tree))
    _git(repo, "worktree", "add", "-q", "-b", "users-own", str(tree))
    (tree / "precious.txt").write_text("keep me\n", encoding="utf-8")
    (removed,) = worktrees.teardown(isolated)
    assert (removed.removed, removed.note) == (False, "not a worktree okstra created at that path any more: left alone")
    assert removed.branch_kept is True  # okstra's branch still exists: it was not touched either
    assert (tree / "precious.txt").read_text(encoding="utf-8") == "keep me\n"
    assert _listed(repo)[str(tree)] == "users-own"
    assert git.branch_exists(repo, entry.branch)


def test_teardown_never_touches_worktrees_it_did_not_record(isolated, repo, tmp_path):
    other = tmp_path / "users-worktree"
    _git(repo, "worktree", "add", "-q", "-b", "feature", str(other))
    worktrees.prepare(isolated, WORKERS, None)
    worktrees.teardown(isolated)
    assert other.is_dir() and _listed(repo)[str(other)] == "feature"
    assert git.branch_exists(repo, "feature")


def test_teardown_of_a_run_that_is_not_isolated_does_nothing(layout, repo):
    assert worktrees.teardown(layout) == []
    assert list(_listed(repo)) == [str(repo)]


def test_merging_a_workers_branch_fast_forwards_the_checked_out_branch_and_records_it(isolated, repo):
    worktrees.prepare(isolated, WORKERS, None)
    tree = isolated.worktree_dir("claude-implementer")
    (tree / "app.py").write_text("print('v2')\n", encoding="utf-8")
    merged = worktrees.merge(isolated, "claude-implementer")
    assert (merged.how, merged.branch) == ("fast-forward", isolated.worktree_branch("claude-implementer"))
    assert merged.head == git.head(repo)
    assert (repo / "app.py").read_text(encoding="utf-8") == "print('v2')\n"
    (entry,) = worktrees.entries(isolated)
    assert entry.merged_as == "fast-forward" and entry.merged_at is not None
    # Merged work: teardown removes the worktree and deletes the branch.
    (removed,) = worktrees.teardown(isolated)
    assert (removed.removed, removed.branch_kept, removed.note) == (True, False, "merged: branch deleted")


def test_merging_after_the_project_moved_on_makes_a_merge_commit(isolated, repo):
    worktrees.prepare(isolated, WORKERS, None)
    (isolated.worktree_dir("claude-implementer") / "new.py").write_text("x = 1\n", encoding="utf-8")
    _commit(repo, "other.py", "y = 2\n", "the user moved on")
    merged = worktrees.merge(isolated, "claude-implementer")
    assert merged.how == "merge-commit"
    assert (repo / "new.py").is_file() and (repo / "other.py").is_file()
    assert _git(repo, "log", "-1", "--format=%an|%s") == f"okstra|okstra: merge {merged.branch}"


def test_a_conflicting_merge_is_refused_and_changes_nothing(isolated, repo):
    worktrees.prepare(isolated, WORKERS, None)
    (isolated.worktree_dir("claude-implementer") / "app.py").write_text("print('worker')\n", encoding="utf-8")
    before = _commit(repo, "app.py", "print('user')\n", "the user edited the same line")
    with pytest.raises(MergeConflict) as refused:
        worktrees.merge(isolated, "claude-implementer")
    assert refused.value.paths == ["app.py"]
    assert git.head(repo) == before and (repo / "app.py").read_text(encoding="utf-8") == "print('user')\n"
    assert _git(repo, "status", "--porcelain") == ""
    (entry,) = worktrees.entries(isolated)
    assert entry.merged_at is None


def test_merging_a_worker_without_a_worktree_is_refused(isolated):
    with pytest.raises(RefusedError) as refused:
        worktrees.merge(isolated, "codex-analyst")
    assert str(refused.value) == f"codex-analyst has no worktree in run {isolated.run_id}; see worktrees.json of the run"


def test_saving_work_of_a_worktree_that_is_gone_saves_nothing(isolated, repo):
    (entry,) = worktrees.prepare(isolated, WORKERS, None)
    assert worktrees.save_work(isolated, entry) is None  # nothing changed yet
    _git(repo, "worktree", "remove", "--force", str(isolated.worktree_dir("claude-implementer")))
    assert worktrees.save_work(isolated, entry) is None


def test_a_worktree_folder_deleted_by_hand_is_still_unregistered_and_its_branch_handled(isolated, repo):
    (entry,) = worktrees.prepare(isolated, WORKERS, None)
    shutil.rmtree(isolated.worktree_dir("claude-implementer"))
    (removed,) = worktrees.teardown(isolated)
    assert (removed.removed, removed.branch_kept, removed.note) == (True, False, "merged: branch deleted")
    assert list(_listed(repo)) == [str(repo)]
    assert not git.branch_exists(repo, entry.branch)
