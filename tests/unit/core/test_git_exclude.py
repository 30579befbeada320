"""git_exclude: okstra's folder leaves git status without touching the user's .gitignore."""

from __future__ import annotations

import subprocess

from okstra.core import git_exclude


def _status(root):
    return subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all"], capture_output=True, text=True
    ).stdout


def test_a_new_pattern_goes_to_info_exclude_once(project):
    (project / ".okstra" / "runs").mkdir(parents=True)
    (project / ".okstra" / "runs" / "log.txt").write_text("x")
    assert git_exclude.ensure_excluded(project, ".okstra/") == project / ".git" / "info" / "exclude"
    assert git_exclude.ensure_excluded(project, ".okstra/") is None
    assert (project / ".git" / "info" / "exclude").read_text().splitlines().count(".okstra/") == 1
    assert _status(project) == ""
    assert not (project / ".gitignore").exists()


def test_gitignore_only_when_asked_and_it_keeps_a_last_line_without_newline(project):
    (project / ".gitignore").write_text("dist")
    assert git_exclude.ensure_excluded(project, ".okstra/", gitignore=True) == project / ".gitignore"
    assert (project / ".gitignore").read_text() == "dist\n.okstra/\n"


def test_already_ignored_anywhere_means_no_change(project):
    (project / ".gitignore").write_text(".okstra/\n")
    before = (project / ".git" / "info" / "exclude").read_bytes()
    assert git_exclude.ensure_excluded(project, ".okstra/") is None
    assert (project / ".git" / "info" / "exclude").read_bytes() == before


def test_a_folder_outside_git_is_left_alone(tmp_path):
    assert git_exclude.ensure_excluded(tmp_path, ".okstra/") is None
    assert list(tmp_path.iterdir()) == [tmp_path / "home"]
