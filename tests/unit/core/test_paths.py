from __future__ import annotations

import os

import pytest

from okstra.core import errors, paths


def test_the_project_root_is_the_nearest_folder_with_git(project):
    nested = project / "src" / "deep"
    nested.mkdir(parents=True)
    assert paths.find_project_root(nested) == project


def test_an_explicit_root_wins(project, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    assert paths.find_project_root(project, explicit=other) == other.resolve()


def test_okstra_project_root_from_the_environment(project, tmp_path, monkeypatch):
    other = tmp_path / "env-root"
    other.mkdir()
    monkeypatch.setenv("OKSTRA_PROJECT_ROOT", str(other))
    assert paths.find_project_root(project) == other.resolve()


def test_no_project_is_an_input_error_with_a_hint(tmp_path):
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    with pytest.raises(errors.InputError, match="--project-root"):
        paths.find_project_root(lonely)


def test_a_relative_path_inside_the_project_resolves(project):
    assert paths.resolve_inside(project, "a/b.md", source="test") == project / "a" / "b.md"


@pytest.mark.parametrize("value", ["../x", "a/../../x", "/etc/passwd"])
def test_escapes_are_refused(project, value):
    with pytest.raises(errors.PathEscapeError) as raised:
        paths.resolve_inside(project, value, source="--result")
    assert str(raised.value).startswith(f"--result: {value!r} resolves to")
    assert "use a path inside the project" in str(raised.value)


def test_a_symlink_pointing_out_is_refused(project, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, project / "link")
    with pytest.raises(errors.PathEscapeError):
        paths.resolve_inside(project, "link/file.md", source="state")


def test_okstra_root_is_allowed_only_when_asked(project, isolated_env):
    own = isolated_env / ".okstra" / "config.yaml"
    with pytest.raises(errors.PathEscapeError):
        paths.resolve_inside(project, str(own), source="x")
    assert paths.resolve_inside(project, str(own), source="x", allow_okstra_root=True) == own


def test_a_nul_byte_is_refused(project):
    with pytest.raises(errors.InputError):
        paths.resolve_inside(project, "a\x00b", source="x")


def test_relative_gives_the_stored_posix_form(project):
    assert paths.relative(project, project / "x" / "y.json") == "x/y.json"


def test_a_command_line_path_is_relative_to_the_current_directory(project, monkeypatch):
    sub = project / "sub"
    sub.mkdir()
    monkeypatch.chdir(sub)
    assert paths.argument(project, "plan.md", source="PLAN") == sub / "plan.md"
    assert paths.resolve_inside(project, "plan.md", source="state") == project / "plan.md"
    with pytest.raises(errors.PathEscapeError):
        paths.argument(project, "../../x", source="PLAN")
