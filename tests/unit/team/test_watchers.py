"""Watcher panes survive reclaim and teardown; only the scoped stop closes them."""

from __future__ import annotations

import json
import os
import threading

import pytest

from fixtures.runs import FAKES
from fixtures.team import contract, prepare, wait_for
from fixtures.tmux import private_server
from okstra.core import schemas
from okstra.core.errors import RefusedError, StateError
from okstra.team import dispatch, lifecycle, watchers


@pytest.fixture(autouse=True)
def fakes(monkeypatch):
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ['PATH']}")


@pytest.fixture
def server(monkeypatch, tmp_path):
    yield from private_server(monkeypatch, tmp_path)


def test_a_watcher_survives_reclaim_and_teardown_and_closes_only_on_stop(server, project):
    run = prepare(project, workers=("claude", "codex"), lead=server.lead)
    dispatch.dispatch(run, contract(run))
    wait_for(run, lambda by: all(d.status == "completed" for d in by.values()), what="both completed")
    watcher = watchers.open_watcher(run)
    rows = server.panes()
    assert rows[watcher.pane_id]["kind"] == "watcher" and rows[watcher.pane_id]["run"] == run.manifest.run_id
    assert watcher.workers == ("claude", "codex")
    assert schemas.problems("watchers", json.loads(run.layout.watchers.read_text())) == []

    lifecycle.reclaim(run)
    lifecycle.teardown(run, grace=1)
    assert watcher.pane_id in server.panes(), "reclaim and teardown must leave the watcher"

    assert watchers.stop(run, dry_run=True).closed == (watcher.pane_id,)
    assert watcher.pane_id in server.panes()
    assert watchers.stop(run).closed == (watcher.pane_id,)
    assert set(server.panes()) == {server.lead}
    assert json.loads(run.layout.watchers.read_text())["watchers"] == []
    assert watchers.stop(run).closed == ()


def test_stop_never_closes_a_users_pane_with_the_same_title(server, project):
    run = prepare(project, workers=("claude",), lead=server.lead)
    dispatch.dispatch(run, contract(run))
    wait_for(run, lambda by: by["claude"].status == "completed", what="claude completed")
    watcher = watchers.open_watcher(run)
    mine = server.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", server.lead, "sleep 60").strip()
    server.tmux("select-pane", "-t", mine, "-T", f"okstra watch {run.manifest.run_id}")
    watchers.stop(run)
    assert mine in server.panes() and watcher.pane_id not in server.panes()


def test_stop_closes_a_watcher_its_team_watch_was_killed_before_recording(server, project):
    """team-watch SIGKILLed between the pane's launch and its record (make hostile's matrix
    found the pane left running forever): stop closes it by its tags, and only this run's."""
    run = prepare(project, workers=("claude",), lead=server.lead)
    dispatch.dispatch(run, contract(run))
    wait_for(run, lambda by: by["claude"].status == "completed", what="claude completed")
    unrecorded = watchers.open_watcher(run)
    run.layout.watchers.write_text('{"schemaVersion": "1.0", "watchers": []}')  # the record never made
    other = server.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", server.lead, "sleep 60").strip()
    server.tmux("set-option", "-p", "-t", other, "@okstra-run", "feature--other--r001")
    server.tmux("set-option", "-p", "-t", other, "@okstra-kind", "watcher")
    assert watchers.stop(run, dry_run=True).closed == (unrecorded.pane_id,)
    assert watchers.stop(run).closed == (unrecorded.pane_id,)
    assert unrecorded.pane_id not in server.panes() and other in server.panes()


def test_team_watch_calls_at_once_get_distinct_ids_all_recorded_each_pane_under_its_own(server, project):
    """Four opens racing on one run (each thread its own lock descriptor, as separate team-watch
    processes have): each id is chosen inside the locked update that records it, so none is
    shared and none is lost, and each pane and log carries the id that was recorded."""
    run = prepare(project, workers=("claude",), lead=server.lead)
    dispatch.dispatch(run, contract(run))
    wait_for(run, lambda by: by["claude"].status == "completed", what="claude completed")
    start = threading.Barrier(4)
    opened: list[watchers.Watcher] = []
    failed: list[BaseException] = []

    def open_one() -> None:
        try:
            start.wait(timeout=10)
            opened.append(watchers.open_watcher(run))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            failed.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not failed, failed
    ids = sorted(w.watcher_id for w in opened)
    assert ids == ["watcher-1", "watcher-2", "watcher-3", "watcher-4"]
    stored = json.loads(run.layout.watchers.read_text())["watchers"]
    assert sorted((w["watcherId"], w["paneId"]) for w in stored) == sorted((w.watcher_id, w.pane_id) for w in opened)
    rows = server.panes()
    for watcher in opened:
        assert rows[watcher.pane_id]["worker"] == watcher.watcher_id and rows[watcher.pane_id]["kind"] == "watcher"
    assert sorted(watchers.stop(run).closed) == sorted(w.pane_id for w in opened)


def test_a_cli_wrapper_run_has_no_panes_to_watch(project):
    run = prepare(project, workers=("claude",), backend="cli-wrapper")
    with pytest.raises(RefusedError, match="has no panes to watch in; follow the logs yourself: tail -F"):
        watchers.open_watcher(run)
    assert not run.layout.watchers.exists()


def test_a_hand_broken_watchers_file_is_refused_with_exit_2_kind(project):
    run = prepare(project, workers=("claude",), backend="cli-wrapper")
    run.layout.watchers.write_text('{"schemaVersion": "1.0", "watchers": [{"paneId": 3}]}')
    with pytest.raises(StateError, match="not a valid watchers document"):
        watchers.stop(run)


def test_the_feed_turns_each_provider_event_into_one_line_and_follows_growth(tmp_path):
    from okstra.team import watchers

    log = tmp_path / "codex.log"
    log.write_text(
        '=== start\n{"type":"thread.started","thread_id":"t"}\n{"type":"item.completed","item":{"type":"command_execution","command":"pytest -q"}}\n{"type":"turn.comp'
    )
    lines: list[str] = []
    rounds = iter([True, False])
    watchers.follow(lambda: {"codex": (log, "codex-jsonl")}, lines.append, keep_going=lambda: next(rounds), clock=lambda: 0.0)
    assert [line.split("  ", 1)[1] for line in lines] == [
        "codex           log      === start  (tokens -)",
        "codex           start    thread.started  (tokens -)",
        "codex           tool     shell pytest -q  (tokens -)",
    ]
    # The half-written last line waits for its end; the feed keeps the tokens it last saw.
    with log.open("a") as handle:
        handle.write('leted","usage":{"input_tokens":1200,"output_tokens":34}}\n\n')
    lines.clear()
    watchers.follow(lambda: {"codex": (log, "codex-jsonl")}, lines.append, keep_going=lambda: False, clock=lambda: 0.0)
    assert [line.split("  ", 1)[1] for line in lines][-1] == "codex           result   turn completed  (tokens 1,234)"
