"""Sequences (DESIGN §2): run and report numbers advance independently."""

from __future__ import annotations

import json
import threading

from okstra.run import layout


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
