"""core.memo: content-addressed, sealed, best-effort memos in $OKSTRA_ROOT/cache/."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from okstra.core import memo


def _folder(kind: str) -> Path:
    return Path(os.environ["OKSTRA_ROOT"]) / "cache" / kind


def test_a_kept_value_is_recalled_by_its_name_and_another_name_misses():
    name = memo.key(b"a", b"b")
    assert memo.recall("k", name) == (False, None)
    memo.keep("k", name, {"x": ["1", None]})
    assert memo.recall("k", name) == (True, {"x": ["1", None]})
    assert memo.recall("k", memo.key(b"a", b"c")) == (False, None)
    assert memo.recall("other", name) == (False, None)


def test_the_name_depends_on_every_part_and_on_where_the_parts_divide():
    assert memo.key(b"ab", b"c") != memo.key(b"a", b"bc")
    assert memo.key(b"a") == memo.key(b"a")


def test_a_memo_changed_by_hand_is_not_believed():
    name = memo.key(b"catalog")
    memo.keep("k", name, {"binary": "claude"})
    path = _folder("k") / f"{name}.json"
    doc = json.loads(path.read_text())
    doc["value"]["binary"] = "/tmp/evil"
    path.write_text(json.dumps(doc))
    assert memo.recall("k", name) == (False, None)
    path.write_text("{not json")
    assert memo.recall("k", name) == (False, None)


def test_each_kind_keeps_its_newest_memos_up_to_the_limit(monkeypatch):
    monkeypatch.setattr(memo, "LIMIT", 3)
    names = [memo.key(str(n).encode()) for n in range(5)]
    for n, name in enumerate(names):
        memo.keep("k", name, n)
        os.utime(_folder("k") / f"{name}.json", ns=(n * 10**9, n * 10**9))
    memo.keep("other", memo.key(b"x"), 1)
    assert [memo.recall("k", name)[0] for name in names] == [False, False, True, True, True]
    assert memo.recall("other", memo.key(b"x")) == (True, 1)


def test_a_cache_that_cannot_be_written_only_costs_speed():
    cache = Path(os.environ["OKSTRA_ROOT"]) / "cache"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("a file where the folder goes")
    memo.keep("k", memo.key(b"a"), 1)
    assert memo.recall("k", memo.key(b"a")) == (False, None)
    memo.keep("k", memo.key(b"b"), object())  # not JSON data: nothing kept, nothing raised
    assert memo.recall("k", memo.key(b"b")) == (False, None)


def _environment(folder: Path):
    import jinja2

    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)), bytecode_cache=memo.template_cache())


def test_a_compiled_template_is_remembered_and_a_changed_template_is_compiled_again(tmp_path, monkeypatch):
    (tmp_path / "t.j2").write_text("Hello {{ name }}!")
    assert _environment(tmp_path).get_template("t.j2").render(name="you") == "Hello you!"
    again = _environment(tmp_path)

    def no_compile(*args, **kwargs):
        raise AssertionError("compiled again")

    monkeypatch.setattr(again, "compile", no_compile)
    assert again.get_template("t.j2").render(name="me") == "Hello me!"
    (tmp_path / "t.j2").write_text("Bye {{ name }}!")
    changed = _environment(tmp_path)
    monkeypatch.setattr(changed, "compile", no_compile)
    with pytest.raises(AssertionError, match="compiled again"):
        changed.get_template("t.j2")


def test_a_compiled_template_changed_by_hand_is_compiled_again(tmp_path):
    (tmp_path / "t.j2").write_text("Hello {{ name }}!")
    _environment(tmp_path).get_template("t.j2")
    (kept,) = _folder("jinja2").iterdir()
    doc = json.loads(kept.read_text())
    doc["value"] = doc["value"][:-8] + "AAAAAAA="
    kept.write_text(json.dumps(doc))
    assert _environment(tmp_path).get_template("t.j2").render(name="you") == "Hello you!"
