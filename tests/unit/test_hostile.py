"""make test's slice of the hostile corpus and of the SIGKILL matrix (issue 15; the whole of
both is `make hostile`, their figures are rows of `make bench`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from hostile import corpus, sigkill  # noqa: E402
from okstra.harness import bash_policy  # noqa: E402


def _figures(tally: corpus.Tally) -> str:
    lines = tally.lines()
    for kind in ("bypasses", "exit70", "orphans", "torn", "lost"):
        lines += [f"  {kind}: {item}" for item in getattr(tally, kind)[:10]]
    return "\n".join(lines)


def test_a_slice_of_every_category_holds():
    """Bash spellings, decisions, file tools, path spellings, links, workers, odd guard state,
    slow inputs, bad input, deputies, disk full, parallel dispatch and a setsid grandchild:
    each at least once, for real; no bypass, exit 70, orphan or torn file."""
    tally = corpus.collect(corpus.SLICE)
    assert tally.ok, _figures(tally)
    assert tally.cases >= 70 and tally.held == tally.cases, _figures(tally)


def test_the_sigkill_matrix_covers_every_door_that_writes():
    """Every bin/ door that is not read-only is a step of the matrix, or says why it writes nothing."""
    doors = {p.name for p in (REPO / "bin").iterdir() if p.is_file()}
    writing = doors - bash_policy.OKSTRA_READ_ONLY
    missing = writing - sigkill.writers() - set(sigkill.WRITE_NOTHING)
    assert not missing, f"add a step for each to tests/hostile/sigkill.py: {sorted(missing)}"
    assert not (sigkill.writers() | set(sigkill.WRITE_NOTHING)) - doors


def test_sigkill_at_random_moments_and_a_full_disk_leave_worker_run_and_render_bundle_whole(tmp_path):
    """The worker pipeline (render-bundle, worker-run, team-teardown): two SIGKILLs at random
    moments and one disk-full run each; then nothing torn or lost, and the run still answers."""
    tally = corpus.Tally()
    env = {"PATH": f"{REPO / 'bin'}:{os.environ['PATH']}", "LANG": "C.UTF-8"}
    sigkill.run_matrix(tmp_path, env, tally, kills=2, fsizes=(1024,), pipelines=("worker",))
    assert tally.ok, _figures(tally)
    assert tally.kills == 6 and tally.disk_full_runs == 3


WHOLE = {
    ".okstra/runs/r/team-state.json": b'{"runId": "r", "workerDispatches": []}',
    ".okstra/tasks/a/b/consumers.jsonl": b'{"stage": 1}\n',
    ".okstra/runs/r/reports/final-report-analysis-001.md": b"# Final report\n\n## Summary\n\nAt 12:00:01 by 4f1c2a9e.\n",
    ".okstra/config.yaml": b"backend: cli-wrapper\n",
}


@pytest.mark.parametrize(
    ("rel", "data", "why"),
    [
        (".okstra/runs/r/team-state.json", b'{"runId": "r", "workerDisp', "not a JSON document"),
        (".okstra/tasks/a/b/consumers.jsonl", b'{"stage": 1}\n{"sta', "a torn JSONL line"),
        (".okstra/runs/r/reports/final-report-analysis-001.md", b"# Final report\n\n## Summ", "neither the old version"),
        (".okstra/config.yaml", b"backend: [cli", "not YAML"),
    ],
)
def test_the_matrix_sees_a_torn_file(rel, data, why):
    """The detector itself: a half-written document of each kind is named torn, a file the
    uncut run kept and the killed one lost is named lost, and the new version (times and ids
    aside) is whole."""
    new = {rel: WHOLE[rel]}
    later = WHOLE[rel].replace(b"12:00:01", b"13:59:59").replace(b"4f1c2a9e", b"0a1b2c3d")
    assert sigkill.check_world({}, new, {rel: later}) == ([], [])
    torn, _ = sigkill.check_world({}, new, {rel: data})
    assert len(torn) == 1 and why in torn[0], torn
    assert sigkill.check_world(new, new, {}) == ([], [rel])


def test_a_half_removed_run_is_torn_a_whole_or_gone_one_is_not():
    run = [f".okstra/runs/r1/{name}" for name in ("run-manifest.json", "team-state.json", "results/a.md")]
    before = {rel: b"{}" for rel in run}
    assert sigkill.check_world(before, {}, {}) == ([], [])
    assert sigkill.check_world(before, {}, dict(before)) == ([], [])
    torn, lost = sigkill.check_world(before, {}, {run[0]: b"{}"})
    assert torn == [".okstra/runs/r1: half removed (1 of 3 files left)"] and lost == []


def test_a_state_file_that_parses_but_breaks_its_schema_is_torn(tmp_path):
    from fixtures.runs import make_run

    layout, _ = make_run(tmp_path)
    rel = ".okstra/runs/feature--rate-limit--r001/run-manifest.json"
    valid = layout.manifest.read_bytes()
    torn, _ = sigkill.check_world({}, {rel: valid}, {rel: b'{"runId": "x"}'})
    assert len(torn) == 1 and "invalid against run-manifest" in torn[0], torn
