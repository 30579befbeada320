"""The tmux-pane backend against a private real tmux server (one per test)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from fixtures.tmux import private_server
from okstra.core import proc
from okstra.core.errors import InputError, StateError
from okstra.team.backends import tmux as tmux_backend
from okstra.team.backends.base import LaunchSpec, PartialLaunch


@pytest.fixture
def server(monkeypatch, tmp_path):
    yield from private_server(monkeypatch, tmp_path)


def backend(tmp_path: Path, run_id: str = "feature--x--r001", lead: str | None = None) -> tmux_backend.TmuxBackend:
    return tmux_backend.TmuxBackend(run_id=run_id, project_root=tmp_path, lead_pane_id=lead)


def spec(tmp_path: Path, worker: str, argv: list[str], title: str | None = None, kind: str = "worker") -> LaunchSpec:
    return LaunchSpec(worker, 1, tuple(argv), title or f"okstra {worker}", tmp_path / f"{worker}.log", tmp_path, kind)


def py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_fast_worker_keeps_its_pane(server, tmp_path):
    # tmux 3.3a sometimes leaves #{pane_dead_status} empty for a pane whose process exited
    # (measured: any lifetime, even with a global remain-on-exit); okstra never reads it —
    # worker-run records the exit status in the team state. What tmux must do is keep the pane.
    marker = tmp_path / "ran"
    done = backend(tmp_path).launch([spec(tmp_path, "w1", py(f"open({str(marker)!r}, 'w'); raise SystemExit(7)"))])
    pane = done[0].pane_id
    server.wait_for(lambda: marker.exists() and server.panes()[pane]["dead"] == "1", what="pane dead")
    time.sleep(0.3)
    row = server.panes()[pane]
    assert row["dead"] == "1" and row["status"] in ("7", "")
    assert (row["run"], row["worker"], row["kind"], row["title"]) == ("feature--x--r001", "w1", "worker", "okstra w1")
    # The lead window's own remain-on-exit is left as it was.
    assert server.tmux("show-options", "-wqv", "-t", server.lead, "remain-on-exit").strip() == ""


def test_a_command_that_exits_at_once_is_still_kept(server, tmp_path):
    done = backend(tmp_path).launch([spec(tmp_path, f"w{i}", ["/bin/false"]) for i in range(6)])
    ids = [d.pane_id for d in done]
    time.sleep(0.3)
    rows = server.panes()
    assert all(rows[p]["dead"] == "1" for p in ids)


def test_panes_sit_beside_the_lead_in_one_column_and_focus_stays(server, tmp_path):
    done = backend(tmp_path).launch([spec(tmp_path, f"w{i}", ["sleep", "30"]) for i in range(4)])
    rows = server.panes()
    assert len(rows) == 5
    assert {rows[d.pane_id]["window"] for d in done} == {rows[server.lead]["window"]}
    assert server.tmux("display-message", "-p", "-t", "lead:", "#{pane_id}").strip() == server.lead
    assert all(d.pid and d.pid > 1 for d in done)
    assert server.tmux("show-options", "-pqv", "-t", server.lead, "@okstra-lead-width").strip() == "240"


def test_values_reach_tmux_and_the_shell_as_data_only(server, tmp_path):
    folder = tmp_path / "it's a $(touch pwned-cwd); dir #(touch pwned-fmt)"
    folder.mkdir()
    hostile = ["a b", "it's", "x; touch pwned1", "$(touch pwned2)", "`touch pwned3`", "back\\slash", "ends;", "#(touch pwned4)"]
    out = tmp_path / "argv.json"
    code = f"import json,os,sys; open({str(out)!r},'w').write(json.dumps([os.getcwd()]+sys.argv[1:]))"
    title = "t #(touch pwned5) #{pane_id} ;x;"
    job = LaunchSpec("w1", 1, (*py(code), *hostile), title, tmp_path / "w1.log", folder)
    pane = backend(tmp_path).launch([job])[0].pane_id
    server.wait_for(lambda: out.exists(), what="argv written")
    assert json.loads(out.read_text()) == [str(folder), *hostile]
    assert server.panes()[pane]["title"] == title
    assert not list(tmp_path.rglob("pwned*")) and not list(Path.cwd().glob("pwned*"))


def test_close_closes_only_the_recorded_ids_and_gives_the_lead_its_width(server, tmp_path):
    b = backend(tmp_path)
    done = b.launch([spec(tmp_path, f"w{i}", ["sleep", "30"]) for i in range(3)])
    # A user's own pane with the same title as a worker's, and a pane of another run.
    user = server.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", server.lead, "sleep 30").strip()
    server.tmux("select-pane", "-t", user, "-T", "okstra w0")
    other = backend(tmp_path, run_id="feature--y--r001").launch([spec(tmp_path, "w0", ["sleep", "30"])])[0].pane_id
    assert int(server.panes()[server.lead]["width"]) < 240
    result = b.close([d.pane_id for d in done])
    assert result.closed == tuple(d.pane_id for d in done)
    rows = server.panes()
    assert user in rows and other in rows and server.lead in rows
    assert not any(d.pane_id in rows for d in done)
    assert result.lead_restored is True
    assert server.panes()[server.lead]["width"] == "240"
    # The other run's pane went to its own window (the lead had a column already): closing
    # it has no width to give back.
    assert rows[other]["window"] != rows[server.lead]["window"]
    assert backend(tmp_path, run_id="feature--y--r001").close([other]).lead_restored is False


def test_a_recorded_id_of_someone_elses_pane_is_left_alone(server, tmp_path):
    user = server.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", server.lead, "sleep 30").strip()
    result = backend(tmp_path).close([user, "%999"])
    assert result.closed == () and result.gone == (user, "%999")
    assert user in server.panes()


def test_dry_run_closes_nothing(server, tmp_path):
    b = backend(tmp_path)
    ids = [d.pane_id for d in b.launch([spec(tmp_path, f"w{i}", ["sleep", "30"]) for i in range(2)])]
    assert b.close(ids, dry_run=True).closed == tuple(ids)
    assert all(p in server.panes() for p in ids)


def test_closing_many_panes_is_one_kill_call(server, tmp_path, monkeypatch):
    b = backend(tmp_path)
    ids = [d.pane_id for d in b.launch([spec(tmp_path, f"w{i}", ["sleep", "30"]) for i in range(12)])]
    calls = []
    real = proc.run
    monkeypatch.setattr(proc, "run", lambda argv, **kw: calls.append(list(argv)) or real(argv, **kw))
    b.close(ids)
    kills = [c for c in calls if "kill-pane" in c]
    assert len(kills) == 1 and kills[0].count("kill-pane") == 12
    assert len(calls) == 2  # one list, one kill (+ the lead's width in the same call)
    assert set(server.panes()) == {server.lead}


def test_launching_many_panes_takes_three_tmux_calls(server, tmp_path, monkeypatch):
    calls = []
    real = proc.run
    monkeypatch.setattr(proc, "run", lambda argv, **kw: calls.append(list(argv)) or real(argv, **kw))
    done = backend(tmp_path).launch([spec(tmp_path, f"w{i}", ["sleep", "30"]) for i in range(16)])
    assert len(calls) <= 4 and len({d.pane_id for d in done}) == 16  # look (2), then one or two launch calls


def test_what_does_not_fit_beside_the_lead_goes_to_okstra_s_own_window(monkeypatch, tmp_path):
    gen = private_server(monkeypatch, tmp_path, width=120, height=10)
    server = next(gen)
    try:
        done = backend(tmp_path).launch([spec(tmp_path, f"w{i}", ["sleep", "30"]) for i in range(8)])
        rows = server.panes()
        assert len({d.pane_id for d in done}) == 8 and all(d.pane_id in rows for d in done)
        windows = {rows[d.pane_id]["window"] for d in done}
        assert len(windows) == 1 and rows[server.lead]["window"] not in windows
        # The lead (120 columns: splitting it would leave less than 100) is not touched at all.
        assert rows[server.lead]["width"] == "120"
        assert server.tmux("show-options", "-pqv", "-t", server.lead, "@okstra-lead-width").strip() == ""
        # The session still shows the lead's window.
        assert server.tmux("display-message", "-p", "-t", "lead:", "#{pane_id}").strip() == server.lead
    finally:
        gen.close()


def _widths(server):
    return {p: int(r["width"]) for p, r in server.panes().items()}


def test_eight_workers_a_redispatch_and_a_watcher_never_squeeze_the_lead_below_its_minimum(server, tmp_path):
    # The user's own layout: a pane below the lead and a second window, with their own options.
    user_below = server.tmux(
        "split-window", "-d", "-v", "-l", "12", "-P", "-F", "#{pane_id}", "-t", server.lead, "sleep 60"
    ).strip()
    user_window = server.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "lead:", "sleep 60").strip()
    server.tmux("set-option", "-w", "-t", server.lead, "pane-border-status", "off")
    before = {
        p: server.tmux("display-message", "-p", "-t", p, "#{pane_width}x#{pane_height} #{window_id}")
        for p in (user_below, user_window)
    }
    lead_width = _widths(server)[server.lead]
    b = backend(tmp_path)
    seen = []
    first = b.launch([spec(tmp_path, f"w{i}", ["sleep", "60"]) for i in range(8)])
    seen.append(_widths(server)[server.lead])
    again = b.launch([spec(tmp_path, "w0", ["sleep", "60"])])  # a redispatch
    seen.append(_widths(server)[server.lead])
    watcher = b.launch([spec(tmp_path, "watch", ["sleep", "60"], kind="watcher")])
    seen.append(_widths(server)[server.lead])
    assert min(seen) >= 100, seen
    rows = server.panes()
    # Titles show on borders in okstra's window only; the user's windows keep their options.
    okstra_window = rows[again[0].pane_id]["window"]
    assert okstra_window == rows[watcher[0].pane_id]["window"] != rows[server.lead]["window"]
    assert server.tmux("show-options", "-wqv", "-t", okstra_window, "pane-border-status").strip() == "top"
    assert server.tmux("show-options", "-wqv", "-t", server.lead, "pane-border-status").strip() == "off"
    assert server.tmux("show-options", "-wqv", "-t", user_window, "pane-border-status").strip() == ""
    assert server.tmux("show-options", "-wqv", "-t", server.lead, "remain-on-exit").strip() == ""
    # Reclaim: the lead gets its width back; the user's panes are as they were.
    result = b.close([d.pane_id for d in first + again + watcher])
    assert result.lead_restored
    assert _widths(server)[server.lead] == lead_width
    after = {
        p: server.tmux("display-message", "-p", "-t", p, "#{pane_width}x#{pane_height} #{window_id}")
        for p in (user_below, user_window)
    }
    assert after == before
    assert set(server.panes()) == {server.lead, user_below, user_window}


def test_the_minimum_width_is_a_knob(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OKSTRA_TMUX_MIN_LEAD_WIDTH", "200")
    done = backend(tmp_path).launch([spec(tmp_path, "w0", ["sleep", "30"])])
    rows = server.panes()
    assert rows[done[0].pane_id]["window"] != rows[server.lead]["window"] and rows[server.lead]["width"] == "240"


def test_reclaiming_part_of_okstra_s_window_retiles_it(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OKSTRA_TMUX_MIN_LEAD_WIDTH", "239")
    b = backend(tmp_path)
    done = b.launch([spec(tmp_path, f"w{i}", ["sleep", "30"]) for i in range(4)])
    b.close([done[1].pane_id])
    window = server.panes()[done[0].pane_id]["window"]
    layout = server.tmux("display-message", "-p", "-t", window, "#{window_layout}").strip()
    server.tmux("select-layout", "-t", window, "tiled")
    assert server.tmux("display-message", "-p", "-t", window, "#{window_layout}").strip() == layout


def test_a_bad_pane_id_is_refused_before_anything_is_closed(server, tmp_path):
    b = backend(tmp_path)
    pane = b.launch([spec(tmp_path, "w1", ["sleep", "30"])])[0].pane_id
    for bad in ["%1; kill-server", "$(reboot)", "1", "%", "%1 ", "surface:1"]:
        with pytest.raises(StateError, match="is not a tmux-pane pane id"):
            b.close([pane, bad])
    assert pane in server.panes()


def test_no_lead_pane_is_a_clear_error(server, tmp_path, monkeypatch):
    monkeypatch.delenv("TMUX_PANE")
    with pytest.raises(InputError, match="no lead pane"):
        backend(tmp_path).launch([spec(tmp_path, "w1", ["true"])])
    with pytest.raises(InputError, match="lead pane %77 is not on the tmux server"):
        backend(tmp_path, lead="%77").launch([spec(tmp_path, "w1", ["true"])])


def test_no_room_at_all_records_what_started(server, tmp_path, monkeypatch):
    b = backend(tmp_path)
    real = b.call

    def failing(commands, check=True):
        if any(c[0] == "split-window" for c in commands):
            commands = [*commands[:8], ["kill-pane", "-t", "%9999"], *commands[8:]]  # after w0 and its tags
        return real(commands, check=check)

    monkeypatch.setattr(b, "call", failing)
    with pytest.raises(PartialLaunch) as caught:
        b.launch([spec(tmp_path, f"w{i}", ["sleep", "30"]) for i in range(3)])
    assert [x.spec.worker_id for x in caught.value.launched] == ["w0"]
    assert server.tmux("show-options", "-wqv", "-t", server.lead, "remain-on-exit").strip() == ""
