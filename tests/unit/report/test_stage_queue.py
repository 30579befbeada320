"""The stage queue (DESIGN §7): consumer log under lock, next stage, base commits for render-bundle."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from conftest import tree_snapshot
from okstra.commands import stage_map as stage_map_cmd
from okstra.commands import stage_record
from okstra.core.errors import InputError, RefusedError, StateError
from okstra.model.layout import TaskKey, for_project
from okstra.report import stage_queue as sq
from okstra.report.stage_map import StageMap, StageRow

KEY = TaskKey("feature", "rate-limit")
SMAP = StageMap(
    Path("plan.data.json"),
    "data",
    (
        StageRow(1, "Core", (), 4, "ok"),
        StageRow(2, "Wire", (1,), 3, "ok"),
        StageRow(3, "Side", (), 1, "ok"),
        StageRow(4, "Docs", (2, 3), 2, "ok"),
    ),
)


@pytest.fixture
def project_layout(project):
    return for_project(project)


def test_an_empty_queue_starts_at_the_first_stage(project_layout):
    q = sq.queue_state(project_layout, KEY, SMAP)
    assert (q.next, q.state, q.done) == (1, "ready", ())
    assert sq.base_commit_for(project_layout, KEY, SMAP, 1) is None


def test_done_stages_advance_the_queue_and_give_base_commits(project_layout):
    sq.record(project_layout, KEY, 1, "done", "AAAAAAA1")
    assert sq.queue_state(project_layout, KEY, SMAP).next == 2
    assert sq.base_commit_for(project_layout, KEY, SMAP, 2) == "aaaaaaa1"
    sq.record(project_layout, KEY, 2, "done", "bbbbbbb2")
    sq.record(project_layout, KEY, 3, "done", "ccccccc3")
    assert sq.base_commit_for(project_layout, KEY, SMAP, 4) == "ccccccc3"  # the dependency recorded last
    sq.record(project_layout, KEY, 4, "done", "ddddddd4")
    assert sq.queue_state(project_layout, KEY, SMAP).state == "complete"


def test_a_failed_stage_stops_the_queue_until_it_is_done(project_layout):
    sq.record(project_layout, KEY, 1, "failed", None)
    q = sq.queue_state(project_layout, KEY, SMAP)
    assert (q.next, q.state, q.failed.stage) == (None, "stopped", 1)
    with pytest.raises(RefusedError, match="stopped: stage 1 failed"):
        sq.base_commit_for(project_layout, KEY, SMAP, 3)
    sq.record(project_layout, KEY, 1, "done", "abcdef0")
    assert sq.queue_state(project_layout, KEY, SMAP).next == 2


@pytest.mark.parametrize(("n", "words"), [(2, "depends on stage(s) 1"), (9, "not in"), (4, "depends on stage(s) 2, 3")])
def test_base_commit_refuses_unmet_dependencies_and_unknown_stages(project_layout, n, words):
    with pytest.raises(RefusedError, match=words.replace("(", r"\(").replace(")", r"\)")):
        sq.base_commit_for(project_layout, KEY, SMAP, n)


def test_base_commit_refuses_a_stage_already_done(project_layout):
    sq.record(project_layout, KEY, 1, "done", "abcdef0")
    with pytest.raises(RefusedError, match="already done"):
        sq.base_commit_for(project_layout, KEY, SMAP, 1)


def test_recording_a_stage_twice_as_done_is_refused_and_writes_nothing(project, project_layout):
    sq.record(project_layout, KEY, 1, "done", "abcdef0")
    before = tree_snapshot(project)
    with pytest.raises(RefusedError, match="already recorded done"):
        sq.record(project_layout, KEY, 1, "done", "abcdef1")
    assert tree_snapshot(project) == before


def test_concurrent_records_of_one_stage_leave_exactly_one_done(project_layout):
    outcomes: list[str] = []

    def go(i: int) -> None:
        try:
            sq.record(project_layout, KEY, 1, "done", f"{i:07x}")
            outcomes.append("ok")
        except RefusedError:
            outcomes.append("refused")

    threads = [threading.Thread(target=go, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["ok"] + ["refused"] * 7
    lines = project_layout.consumers_log(KEY).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["status"] == "done"


@pytest.mark.parametrize(
    "line",
    [
        '{"stage": 1, "status": "done"',
        '{"stage": 0, "status": "done", "headCommit": "abcdef0", "recordedAt": "t"}',
        '{"stage": 1, "status": "ok", "headCommit": null, "recordedAt": "t"}',
        '{"stage": 1, "status": "done", "headCommit": null, "recordedAt": "t"}',
        '{"stage": 1, "status": "done", "headCommit": "xyz", "recordedAt": "t"}',
        "[]",
    ],
)
def test_an_invalid_consumer_log_is_a_state_error_naming_the_line(project_layout, line):
    path = project_layout.consumers_log(KEY)
    path.parent.mkdir(parents=True)
    path.write_text('{"stage": 3, "status": "failed", "headCommit": null, "recordedAt": "t"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(StateError, match="consumers.jsonl:2:"):
        sq.queue_state(project_layout, KEY, SMAP)


def test_a_log_naming_stages_the_plan_lacks_is_refused(project_layout):
    sq.record(project_layout, KEY, 7, "done", "abcdef0")
    with pytest.raises(StateError, match="stage\\(s\\) 7"):
        sq.queue_state(project_layout, KEY, SMAP)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--task-key", "Feature/x", "--stage", "1", "--status", "done", "--head-commit", "abcdef0"], "not a task key"),
        (["--task-key", "../x", "--stage", "1", "--status", "done", "--head-commit", "abcdef0"], "not a task key"),
        (["--task-key", "a/b", "--stage", "0", "--status", "done", "--head-commit", "abcdef0"], "--stage"),
        (["--task-key", "a/b", "--stage", "١", "--status", "done", "--head-commit", "abcdef0"], "--stage"),
        (["--task-key", "a/b", "--stage", "1", "--status", "ok"], "invalid choice"),
        (["--task-key", "a/b", "--stage", "1", "--status", "done"], "required when the status is done"),
        (["--task-key", "a/b", "--stage", "1", "--status", "done", "--head-commit", "abc"], "not a commit SHA"),
        (["--task-key", "a/b", "--stage", "1", "--status", "done", "--head-commit", "g" * 40], "not a commit SHA"),
        (["--task-key", "a/b", "--stage", "1", "--status", "done", "--head-commit", "a" * 41], "not a commit SHA"),
    ],
)
def test_stage_record_refuses_bad_arguments_with_one_line(project, capsys, args, words):
    before = tree_snapshot(project)
    assert stage_record.main(args) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1
    assert tree_snapshot(project) == before


def test_stage_record_and_stage_map_next_work_together(project, capsys):
    (project / "plan.md").write_text(
        "# Plan\n\n## Stage Map\n\n| Stage | Title | Depends On | Steps | Exit Contract |\n|---|---|---|---|---|\n"
        "| 1 | Core | none | 1 | a |\n| 2 | Wire | 1 | 1 | b |\n",
        encoding="utf-8",
    )
    assert (
        stage_record.main(["--task-key", "feature/rate-limit", "--stage", "1", "--status", "done", "--head-commit", "abcdef0"])
        == 0
    )
    assert capsys.readouterr().out == ".okstra/tasks/feature/rate-limit/consumers.jsonl: stage 1 done at abcdef0\n"
    assert stage_map_cmd.main(["plan.md", "--task-key", "feature/rate-limit", "--next", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["queue"]["next"] == 2 and doc["queue"]["done"] == [1] and doc["order"] == [1, 2]
    assert stage_map_cmd.main(["plan.md", "--next"]) == 2
    assert "--next needs --task-key" in capsys.readouterr().err


def test_check_sha_normalises_case():
    assert sq.check_sha(" ABCDEF0 ") == "abcdef0"
    with pytest.raises(InputError):
        sq.check_sha("abcdef0\n1")
