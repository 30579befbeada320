"""Sequences (DESIGN §2): run and report numbers advance independently."""

from __future__ import annotations

import json
import threading

from okstra.model import layout


def _setup(project):
    return layout.for_project(project), layout.TaskKey.parse("feature/rate-limit")


def test_a_fresh_task_starts_every_category_at_one(project):
    proj, key = _setup(project)
    assert layout.peek(proj, key, "runs") == 1
    assert layout.peek(proj, key, "reports") == 1
    assert not proj.task_json(key).exists()  # peeking writes nothing


def test_claim_uses_a_number_up_and_peek_does_not(project):
    proj, key = _setup(project)
    assert layout.claim(proj, key, "runs") == 1
    assert layout.claim(proj, key, "runs") == 2
    assert layout.peek(proj, key, "reports") == 1
    assert layout.peek(proj, key, "reports") == 1


def test_a_run_that_wrote_no_report_leaves_its_report_number_to_the_next_run(project):
    proj, key = _setup(project)
    # Run 1 renders with report number 1 (peeked) and writes a report: committed.
    run1, report1 = layout.claim(proj, key, "runs"), layout.peek(proj, key, "reports")
    layout.commit(proj, key, "reports", report1)
    # Run 2 renders with report number 2 but dies before writing a report.
    run2, report2 = layout.claim(proj, key, "runs"), layout.peek(proj, key, "reports")
    # Run 3 reuses the free report number 2 while its run number moves on.
    run3, report3 = layout.claim(proj, key, "runs"), layout.peek(proj, key, "reports")
    assert (run1, report1) == (1, 1)
    assert (run2, report2) == (2, 2)
    assert (run3, report3) == (3, 2)
    layout.commit(proj, key, "reports", report3)
    assert layout.peek(proj, key, "reports") == 3
    assert json.loads(proj.task_json(key).read_text())["sequences"] == {"runs": 3, "reports": 2}


def test_commit_never_moves_a_sequence_back(project):
    proj, key = _setup(project)
    layout.commit(proj, key, "reports", 4)
    layout.commit(proj, key, "reports", 2)
    assert layout.peek(proj, key, "reports") == 5


def test_report_file_names_use_the_report_number_not_the_run_number(project):
    proj, key = _setup(project)
    run = proj.run(proj.run_id(key, 3))
    assert run.run_id == "feature--rate-limit--r003"
    assert run.report_markdown("analysis", 2).name == "final-report-analysis-002.md"
    assert run.sidecar("analysis", 2).name == "user-response-analysis-002.md"


def test_concurrent_claims_hand_out_distinct_numbers(project):
    proj, key = _setup(project)
    got: list[int] = []
    lock = threading.Lock()

    def worker():
        n = layout.claim(proj, key, "runs")
        with lock:
            got.append(n)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == list(range(1, 9))


# -- report naming, attempts, the run handle ---------------------------------------


def test_a_report_pair_maps_both_ways_and_nothing_else_is_a_report():
    from pathlib import Path

    md, data = Path("/p/r/final-report-analysis-001.md"), Path("/p/r/final-report-analysis-001.data.json")
    assert (layout.markdown_of(data), layout.data_of(md)) == (md, data)
    assert (layout.markdown_of(md), layout.data_of(data)) == (md, data)
    assert layout.report_stem(md) == layout.report_stem(data) == "final-report-analysis-001"
    assert layout.report_stem(Path("/p/r/notes.txt")) is None
    assert layout.markdown_of(Path("/p/plain.json")) == Path("/p/plain.md")


def test_new_attempt_takes_every_path_from_the_layout(project):
    run = layout.for_project(project).run("feature--x--r001")
    d = layout.new_attempt(run, worker_id="codex", role="verifier", provider="codex", model_id="gpt-5", attempt=2)
    assert (d.status, d.round, d.attempt) == ("pending", "verification", 2)
    assert d.prompt_path == run.relative(run.prompt_path("codex", 2))
    assert d.result_path == run.relative(run.result_path("codex", 2))
    assert d.liveness_artifact == run.relative(run.heartbeat_path("codex", 2))
    logged = layout.new_attempt(
        run, worker_id="codex", role="verifier", provider="codex", model_id="gpt-5", attempt=1, liveness_mode="log"
    )
    assert logged.liveness_artifact == logged.log_path == run.relative(run.log_path("codex", 1))


def _rendered(project):
    from okstra.run import bundle

    return bundle.render(
        project, bundle.BundleRequest(task_key="feature/x", task_type="analysis", workers=["claude"], brief="a test task")
    )


def test_open_run_finds_the_active_run_of_the_project_root_given_from_anywhere(project, tmp_path, monkeypatch):
    made = _rendered(project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    run = layout.open_run(None, project_root=str(project))
    assert (run.root, run.manifest_path, run.manifest.run_id) == (project, made.run_manifest_path, "feature--x--r001")
    assert run.team_state_path == run.layout.team_state


def test_open_run_refuses_a_manifest_outside_the_project_it_works_in(project, tmp_path):
    import pytest

    from okstra.core.errors import InputError, PathEscapeError

    _rendered(project)
    with pytest.raises(PathEscapeError):
        layout.open_run("/etc/hostname")
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(PathEscapeError):
        layout.open_run(".okstra/runs/feature--x--r001/run-manifest.json", project_root=str(other))
    with pytest.raises(InputError, match="is not a run manifest"):
        layout.open_run(".okstra/runs/feature--x--r001/team-state.json")
