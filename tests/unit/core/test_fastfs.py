"""core.fastfs does what os.path does (it stands in for it on the write-guard hot path)."""

from __future__ import annotations

import os
import posixpath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from okstra.core import fastfs

SEGMENTS = st.lists(st.sampled_from(["a", "b", ".", "..", "", "c.d", "~", "x y"]), max_size=8)


@given(SEGMENTS, st.booleans())
def test_normpath_join_split_agree_with_posixpath(parts, absolute):
    path = ("/" if absolute else "") + "/".join(parts)
    assert fastfs.normpath(path) == posixpath.normpath(path)
    assert fastfs.split(path) == posixpath.split(path)
    assert fastfs.basename(path) == posixpath.basename(path)
    assert fastfs.join("base", *parts) == posixpath.join("base", *parts)
    assert fastfs.abspath(path) == posixpath.abspath(path)


def test_realpath_agrees_with_os_path_on_links_loops_and_missing_parts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real" / "deep").mkdir(parents=True)
    (tmp_path / "link").symlink_to("real/deep")
    (tmp_path / "abs").symlink_to(tmp_path / "real")
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    (tmp_path / "dangling").symlink_to("nowhere/file")
    (tmp_path / "real" / "deep" / "up").symlink_to("../..")
    cases = [
        "link/x",
        "link/../y",
        "abs/deep/up/link",
        "loop1/z",
        "dangling",
        "missing/../a",
        ".",
        "",
        "//x/./y",
        str(tmp_path / "link" / ".." / ".." / "q"),
        "real/deep/up/up/up",
    ]
    for case in cases:
        assert fastfs.realpath(case) == os.path.realpath(case), case


def test_the_small_predicates(tmp_path, monkeypatch):
    (tmp_path / "f").write_text("x")
    assert fastfs.isfile(str(tmp_path / "f")) and not fastfs.isdir(str(tmp_path / "f"))
    assert fastfs.isdir(str(tmp_path)) and fastfs.exists(str(tmp_path)) and not fastfs.exists(str(tmp_path / "no"))
    assert not fastfs.exists("bad\x00path")
    monkeypatch.setenv("HOME", "/home/someone")
    assert fastfs.expanduser("~/x") == "/home/someone/x" == os.path.expanduser("~/x")
    assert fastfs.expanduser("~") == "/home/someone"
    assert fastfs.expanduser("a/~") == "a/~"
    assert fastfs.environ()["HOME"] == "/home/someone"


@pytest.mark.parametrize("user", ["root", "no-such-user-okstra"])
def test_expanduser_of_a_named_user_agrees(user):
    assert fastfs.expanduser(f"~{user}/x") == os.path.expanduser(f"~{user}/x")
