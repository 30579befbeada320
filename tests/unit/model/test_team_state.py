"""model.team_state: every dispatch attempt of a run, changed only by a locked read-modify-write (DESIGN §2)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fixtures.runs import add_attempt, make_run
from fixtures.team import edit_team_state
from okstra.core import fsio, seal
from okstra.core.errors import InputError, StateError
from okstra.model import team_state
from okstra.model.dispatch import COMPLETED, ERROR, Dispatch
from okstra.model.team_state import TeamState

LIB = Path(team_state.__file__).resolve().parents[2]

# One process's share of the concurrent test: add ROUNDS attempts of its worker, each as
# read (find the newest) → think → write, so an unlocked writer would lose the other's records.
ADDER = """
import sys, time
from pathlib import Path
from okstra.model import team_state
from okstra.model.team_state import TeamState

path, worker, rounds, go = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
while not go.exists():
    time.sleep(0.001)

def add(state):
    newest = state.find(worker)
    time.sleep(0.002)
    return TeamState(state.run_id, state.dispatches + (newest.evolve(attempt=newest.attempt + 1),))

for _ in range(rounds):
    team_state.update(path, add)
"""


@pytest.fixture
def run(project):
    layout, _ = make_run(project, ["claude", "codex", "grok"])
    return layout


def _state(*dispatches: Dispatch) -> TeamState:
    return TeamState("feature--x--r001", dispatches)


def test_a_prepared_team_state_loads_with_one_pending_attempt_per_worker(run):
    state = team_state.load(run.team_state)
    assert state.run_id == "feature--rate-limit--r001"
    assert [(d.worker_id, d.attempt, d.status) for d in state.dispatches] == [
        ("claude-analyst", 1, "pending"),
        ("codex-analyst", 1, "pending"),
        ("grok-analyst", 1, "pending"),
    ]


def test_a_state_written_and_loaded_again_is_equal(run):
    state = team_state.load(run.team_state)
    changed = TeamState(state.run_id, (state.dispatches[0].evolve(status=COMPLETED, exit_code=0), *state.dispatches[1:]))
    team_state.write(run.team_state, changed)
    assert team_state.load(run.team_state) == changed
    assert changed.to_dict()["schemaVersion"] == team_state.SCHEMA_VERSION == "1.0"


def test_latest_is_the_newest_attempt_of_each_worker_in_roster_order():
    a1, b1 = Dispatch("a", "analyst", "claude", "m"), Dispatch("b", "analyst", "codex", "m")
    a3, a2 = a1.evolve(attempt=3), a1.evolve(attempt=2)
    assert _state(a1, b1, a3, a2).latest() == (a3, b1)


def test_find_gives_the_newest_attempt_or_the_one_asked_for():
    a1 = Dispatch("a", "analyst", "claude", "m")
    a2 = a1.evolve(attempt=2)
    state = _state(a2, a1)
    assert state.find("a") == a2
    assert state.find("a", 1) == a1


def test_the_open_breakers_are_the_providers_that_hit_a_limit_in_the_order_they_did():
    codex = Dispatch("codex-analyst", "analyst", "codex", "m", status=ERROR, reason="rate-limited: 429")
    claude = Dispatch("claude-analyst", "analyst", "claude", "m", status=ERROR, reason="rate-limited; retry after 1m")
    grok = Dispatch("grok-analyst", "analyst", "grok", "m", status=ERROR, reason="provider exited 1: rate-limited?")
    again = codex.evolve(worker_id="codex-critic", role="critic")
    assert _state(codex, grok, claude, again).open_breakers() == ["codex", "claude"]
    assert _state(grok).open_breakers() == []


def test_finding_an_unknown_worker_is_refused_naming_the_known_ones():
    state = _state(Dispatch("b", "analyst", "codex", "m"), Dispatch("a", "analyst", "claude", "m"))
    with pytest.raises(StateError) as refused:
        state.find("c")
    assert str(refused.value) == "no dispatch for worker 'c' in run feature--x--r001; known workers: a, b"


def test_finding_an_attempt_that_was_never_made_is_refused():
    with pytest.raises(StateError, match=r"^no dispatch for worker 'a' in run feature--x--r001; known workers: a$"):
        _state(Dispatch("a", "analyst", "claude", "m")).find("a", 2)


@pytest.mark.parametrize("raw", [[], {"runId": "x"}, {"runId": "x", "workerDispatches": {"a": {}}}, None])
def test_a_document_without_a_dispatch_list_is_refused_naming_its_source(raw):
    with pytest.raises(StateError) as refused:
        TeamState.from_dict(raw, "ts.json")
    assert str(refused.value) == "ts.json: not a team-state document (no workerDispatches list)"


def test_loading_a_torn_file_names_it_and_the_line(run):
    run.team_state.write_text('{"runId": "x", "workerDispatches": [\n', encoding="utf-8")
    with pytest.raises(InputError, match=rf"^{run.team_state}: not valid JSON at line 2"):
        team_state.load(run.team_state)


def test_a_bad_record_is_refused_naming_the_file(run):
    edit_team_state(run.team_state, lambda doc: doc["workerDispatches"][1].update(status="finished"))
    with pytest.raises(StateError, match=rf"^{run.team_state}: dispatch 'codex-analyst' has status 'finished'; "):
        team_state.load(run.team_state)


def test_update_writes_the_new_state_and_returns_it(run):
    def end_codex(state):
        return TeamState(
            state.run_id, tuple(d.evolve(status=ERROR) if d.worker_id == "codex-analyst" else d for d in state.dispatches)
        )

    new = team_state.update(run.team_state, end_codex)
    assert new.find("codex-analyst").status == ERROR
    assert team_state.load(run.team_state) == new


@pytest.mark.parametrize("answer", ["none", "same"])
def test_update_with_no_change_leaves_the_file_untouched(run, answer):
    before = run.team_state.read_bytes()
    stamp = run.team_state.stat().st_mtime_ns
    time.sleep(0.01)
    result = team_state.update(run.team_state, lambda s: None if answer == "none" else TeamState(s.run_id, s.dispatches))
    assert result == team_state.load(run.team_state)
    assert run.team_state.read_bytes() == before
    assert run.team_state.stat().st_mtime_ns == stamp


def test_a_change_that_fails_leaves_the_file_as_it_was(run):
    before = run.team_state.read_bytes()

    def change(state):
        state.find("nobody")

    with pytest.raises(StateError, match="no dispatch for worker 'nobody'"):
        team_state.update(run.team_state, change)
    assert run.team_state.read_bytes() == before


def test_updating_a_missing_team_state_is_refused_and_creates_nothing_but_its_lock(tmp_path):
    path = tmp_path / "runs" / "x" / "team-state.json"
    with pytest.raises(StateError) as refused:
        team_state.update(path, lambda s: s)
    assert str(refused.value) == f"{path}: no such state file; was the run prepared with render-bundle?"
    assert not path.exists()


def test_update_dispatch_changes_one_attempt_and_nothing_else(run):
    add_attempt(run, "claude-analyst")
    before = team_state.load(run.team_state)
    new = team_state.update_dispatch(run.team_state, "claude-analyst", 1, lambda d: d.evolve(status=COMPLETED, exit_code=0))
    after = team_state.load(run.team_state)
    assert (new.worker_id, new.attempt, new.status) == ("claude-analyst", 1, COMPLETED)
    assert after.find("claude-analyst", 1) == new
    assert [d for d in after.dispatches if d.key != new.key] == [d for d in before.dispatches if d.key != new.key]
    assert [d.key for d in after.dispatches] == [d.key for d in before.dispatches]


def test_update_dispatch_of_an_unknown_attempt_is_refused_and_writes_nothing(run):
    before = run.team_state.read_bytes()
    with pytest.raises(StateError, match="no dispatch for worker 'claude-analyst'"):
        team_state.update_dispatch(run.team_state, "claude-analyst", 5, lambda d: d.evolve(status=COMPLETED))
    assert run.team_state.read_bytes() == before


def test_two_processes_updating_at_once_lose_no_change(run, tmp_path):
    rounds = 25
    go = tmp_path / "go"
    env = {"PYTHONPATH": str(LIB), "PATH": "/usr/bin:/bin"}
    procs = [
        subprocess.Popen([sys.executable, "-c", ADDER, str(run.team_state), worker, str(rounds), str(go)], env=env)
        for worker in ("claude-analyst", "codex-analyst")
    ]
    time.sleep(0.3)
    go.touch()
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    state = team_state.load(run.team_state)
    attempts = {w: sorted(d.attempt for d in state.dispatches if d.worker_id == w) for w in ("claude-analyst", "codex-analyst")}
    assert attempts == {w: list(range(1, rounds + 2)) for w in attempts}
    assert [d.attempt for d in state.dispatches if d.worker_id == "grok-analyst"] == [1]


# -- the seal (DESIGN §14) -------------------------------------------------------------


def test_the_writer_seals_the_file_and_the_seal_matches_its_content(run):
    doc = json.loads(run.team_state.read_text(encoding="utf-8"))
    assert doc["seal"].startswith("sha256:")
    assert seal.open_json(doc, "t", "") == team_state.load(run.team_state).to_dict()


@pytest.mark.parametrize(
    "edit",
    [
        lambda doc: doc["workerDispatches"][0].update(status="completed"),
        lambda doc: doc["workerDispatches"][0].update(resultPath="../elsewhere.md"),
        lambda doc: doc.pop("seal"),
    ],
    ids=["status", "resultPath", "no-seal"],
)
def test_a_team_state_changed_outside_okstra_is_refused_by_load_and_update(run, edit):
    doc = json.loads(run.team_state.read_text(encoding="utf-8"))
    edit(doc)
    run.team_state.write_text(json.dumps(doc), encoding="utf-8")
    before = run.team_state.read_bytes()
    for read in (lambda: team_state.load(run.team_state), lambda: add_attempt(run, "codex-analyst")):
        with pytest.raises(StateError, match=rf"^{run.team_state} (was changed outside okstra|has no okstra seal)") as refused:
            read()
        assert "\n" not in str(refused.value) and "render-bundle" in str(refused.value)
    assert run.team_state.read_bytes() == before


def test_a_team_state_from_an_older_okstra_without_a_seal_is_refused_with_the_reason(run):
    doc = json.loads(run.team_state.read_text(encoding="utf-8"))
    del doc["seal"]
    fsio.write_json(run.team_state, doc)
    with pytest.raises(StateError, match="has no okstra seal: it was written outside okstra \\(or by an older okstra\\)"):
        team_state.load(run.team_state)
