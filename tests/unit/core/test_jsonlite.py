"""jsonlite: the write-guard hot path's JSON, which must read and write exactly what `json` does
(DESIGN §10, §13)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPO
from okstra.core import jsonlite

documents = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(documents, st.sampled_from([None, 2]))
def test_loads_reads_what_json_writes(document, indent):
    text = json.dumps(document, indent=indent)
    assert repr(jsonlite.loads(text)) == repr(json.loads(text))


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("", "line 1 column 1"),
        ('{"a": 1,}', "line 1"),
        ('{"a": 1}\n{"b": 2}', "line 2 column 1: extra data"),
        ("\ufeff{}", "byte-order mark"),
        ('{\n  "a": tru\n}', "line 2"),
    ],
)
def test_bad_json_is_a_json_error_naming_where(text, where):
    with pytest.raises(jsonlite.JSONError, match=where):
        jsonlite.loads(text)


def test_a_deep_document_is_an_error_not_a_crash():
    with pytest.raises(jsonlite.JSONError):
        jsonlite.loads("[" * 100_000 + "]" * 100_000)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=10), st.text(max_size=20) | st.dictionaries(st.text(max_size=5), st.text(max_size=10))))
def test_dumps_flat_writes_json_that_json_reads_back(document):
    assert json.loads(jsonlite.dumps_flat(document)) == document


def test_it_loads_without_importing_json():
    code = "import sys; sys.path.insert(0, sys.argv[1]); from okstra.core import jsonlite; jsonlite.loads('{\"a\": [1]}'); print('json' in sys.modules)"
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(REPO / "lib")], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
