"""templates/views/sidecar.js writes the same bytes as report.sidecar.serialize.

Runs the JS with node (a test tool only; the HTML view needs no node) over
hypothesis-generated inputs, through one long-lived node process.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okstra.core.errors import InputError
from okstra.report import sidecar as sc
from unit.report.sidecar_strategies import responses

REPO = Path(__file__).resolve().parents[3]
JS = REPO / "templates" / "views" / "sidecar.js"

DRIVER = r"""
const fs = require("fs");
const readline = require("readline");
eval(fs.readFileSync(process.argv[1], "utf8") + "\n;globalThis.__s = okstraSerializeSidecar; globalThis.__f = okstraSidecarFileName;");
const rl = readline.createInterface({input: process.stdin});
rl.on("line", (line) => {
  const req = JSON.parse(line);
  let reply;
  try { reply = {text: globalThis.__s(req.obj), name: globalThis.__f(req.obj.meta || {})}; }
  catch (e) { reply = {error: String(e.message)}; }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
"""


class Node:
    def __init__(self) -> None:
        node = shutil.which("node") or "/usr/bin/node"
        if not Path(node).exists():
            pytest.fail("node is required for the sidecar.js parity test (see README dependencies)")
        self.proc = subprocess.Popen(
            [node, "-e", DRIVER, str(JS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def serialize(self, obj: object) -> dict:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps({"obj": obj}, ensure_ascii=True) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def node():
    n = Node()
    yield n
    n.close()


@settings(max_examples=300, deadline=None)
@given(r=responses)
def test_js_writes_the_same_bytes_as_python(node, r):
    obj = r.to_dict()
    reply = node.serialize(obj)
    assert reply.get("error") is None, reply
    assert reply["text"] == sc.serialize(sc.responses_from_export_object(obj)) == sc.serialize(r)
    assert reply["name"] == f"user-response-{r.meta.task_type}-{r.meta.report_number:03d}.md"


@settings(max_examples=100, deadline=None)
@given(
    r=responses,
    option=st.sampled_from([" opt 2 ", "b", "a_b\t c", "Opt-7"]),
    name=st.sampled_from(["  Fast \n path ", "x", "a\t\tb"]),
)
def test_js_normalises_option_ids_and_names_like_python(node, r, option, name):
    obj = r.to_dict()
    obj["directionSelection"] = {"optionId": option, "optionName": name, "notes": None}
    obj["planDecision"] = {"status": "approved", "option": option}
    reply = node.serialize(obj)
    assert reply["text"] == sc.serialize(sc.responses_from_export_object(obj))


def test_lone_surrogates_and_astral_characters_match(node):
    base = sc.Responses(sc.SidecarMeta("a/b", "analysis", 1, "r1", "x.md", "now")).to_dict()
    base["answers"] = [
        {"questionId": "Q1", "question": "\ud800 \udfff x\udc00", "answer": "😀 \U0001f600 \u2028", "recordedBy": "user"}
    ]
    reply = node.serialize(base)
    assert reply["text"] == sc.serialize(sc.responses_from_export_object(base))
    assert "\\ud800" in reply["text"] and "😀" in reply["text"]


BAD = [
    {"meta": None, "answers": []},
    {"meta": {"taskKey": "a/b"}},
    {"planDecision": {"status": "approve", "option": "A"}},
    {"planDecision": {"status": "approved"}},
    {"planDecision": {"status": "rejected", "reason": " "}},
    {"planDecision": {"status": "approved", "option": "2"}},
    {"analysisReview": {"status": "changes-requested"}},
    {"directionSelection": {"optionId": "é", "optionName": "x"}},
    {"directionSelection": {"optionId": "A", "optionName": " "}},
    {"reportAuthoring": {"status": "approved", "reason": ""}},
    {"reportAuthoring": {"status": "approved"}},
    {"reportAuthoring": {"status": "granted", "reason": "x"}},
    {"answers": [{"questionId": "Q1", "question": "q", "answer": 1, "recordedBy": "user"}]},
    {"answers": [{"questionId": "Q 1", "question": "q", "answer": "a", "recordedBy": "user"}]},
    {"answers": [{"questionId": "Q1", "question": "q", "answer": "a", "recordedBy": "user"}] * 2},
    {"answers": [{"questionId": "Q1", "question": "q", "answer": "a"}]},
    {"answers": [{"questionId": "Q1", "question": "q", "answer": "a", "recordedBy": "lead"}]},
    {"extra": 1},
]


@pytest.mark.parametrize("change", BAD)
def test_js_and_python_refuse_the_same_invalid_objects(node, change):
    obj = sc.Responses(sc.SidecarMeta("a/b", "analysis", 1, "r1", "x.md", "now")).to_dict()
    obj.update(change)
    reply = node.serialize(obj)
    assert "error" in reply, reply
    with pytest.raises(InputError):
        sc.responses_from_export_object(obj)


@pytest.mark.parametrize(
    "meta_change", [{"reportNumber": 0}, {"reportNumber": 1.5}, {"taskKey": "a/b\n"}, {"runId": "R"}, {"createdAt": " "}]
)
def test_js_and_python_refuse_the_same_invalid_meta(node, meta_change):
    obj = sc.Responses(sc.SidecarMeta("a/b", "analysis", 1, "r1", "x.md", "now")).to_dict()
    obj["meta"].update(meta_change)
    assert "error" in node.serialize(obj)
    with pytest.raises(InputError):
        sc.responses_from_export_object(obj)
