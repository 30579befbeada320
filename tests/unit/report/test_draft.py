from __future__ import annotations

import json

import pytest

from okstra.core import errors, schemas
from okstra.model import team_state
from okstra.model.dispatch import COMPLETED, ERROR, Usage
from okstra.model.layout import for_project, open_run
from okstra.report import draft, render
from okstra.run import bundle, catalog, failover, rounds

CONTENT = {
    "aiHandoffSummary": "Two analysts agree.",
    "findings": [{"id": "F1", "title": "A finding", "severity": "low", "summary": "x", "evidence": [{"path": "a.py"}]}],
    "openQuestions": [{"id": "Q1", "question": "Which way?", "kind": "free-text"}],
}


def _finish(run, worker, text, usage):
    d = team_state.load(run.team_state).find(worker)
    (run.project_root / d.result_path).write_text(text)
    team_state.update_dispatch(run.team_state, worker, d.attempt, lambda x: x.evolve(status=COMPLETED, usage=usage))


def _run_with_writer(project, block: str):
    made = bundle.render(
        project,
        bundle.BundleRequest("demo/draft", "analysis", brief="a test task", workers=("claude", "codex"), backend="cli-wrapper"),
    )
    run = for_project(project).run(made.run_id)
    _finish(run, "claude", "# A\n", Usage(100, 10, 50, 0.25))
    _finish(run, "codex", "# B\n", Usage(200, 20, 0, None))
    rounds.prepare(open_run(made.run_manifest_path), "report-writer")
    _finish(run, "claude", f"# Report\n\n```json\n{block}\n```\n", Usage(1000, 100, 500, 0.5))
    return made, run


def test_the_draft_takes_content_from_the_writer_and_facts_from_the_records(project):
    made, run = _run_with_writer(project, json.dumps(CONTENT))
    done = draft.draft(open_run(made.run_manifest_path), owner="Mina")
    doc = json.loads(done.data_path.read_text())
    assert done.data_path == run.report_data("analysis", made.report_number)
    assert schemas.problems("final-report-v2.0", doc) == []
    assert doc["findings"] == CONTENT["findings"] and doc["openQuestions"] == CONTENT["openQuestions"]
    assert doc["header"]["reportAuthor"] == "report-writer (Claude Code, claude-sonnet-4-5)"
    assert doc["header"]["reportOwner"] == "Mina" and doc["header"]["runId"] == made.run_id
    usage = {(p.get("workerId"), p["role"]): p["usage"] for p in doc["participants"]}
    assert usage[("claude", "analyst")] == {"inputTokens": 100, "outputTokens": 10, "cachedTokens": 50, "costUsd": 0.25}
    assert usage[("claude", "report-writer")]["inputTokens"] == 1000
    assert usage[("codex", "analyst")]["costUsd"] is None
    assert doc["decisionsRequired"]["analysisReview"] is True


def test_a_writer_cannot_set_the_header_or_participants(project):
    forged = dict(CONTENT, participants=[], header={"reportAuthor": "me"})
    made, run = _run_with_writer(project, json.dumps(forged))
    with pytest.raises(errors.InputError, match="sets header, participants, which okstra fills"):
        draft.draft(open_run(made.run_manifest_path))
    assert not run.report_data("analysis", made.report_number).exists()


def test_a_result_without_a_json_block_is_refused(project):
    made, _ = _run_with_writer(project, "")
    team = team_state.load(for_project(project).run(made.run_id).team_state)
    writer = team.find("claude")
    (project / writer.result_path).write_text("# Report\n\nno block here\n")
    with pytest.raises(errors.InputError, match="no ```json block"):
        draft.draft(open_run(made.run_manifest_path))


def test_no_report_writer_is_refused_unless_a_skeleton_is_asked(project):
    made = bundle.render(
        project, bundle.BundleRequest("demo/draft", "analysis", brief="a test task", workers=("claude",), backend="cli-wrapper")
    )
    with pytest.raises(errors.RefusedError, match="--skeleton"):
        draft.draft(open_run(made.run_manifest_path))
    done = draft.draft(open_run(made.run_manifest_path), skeleton_only=True)
    assert done.document["header"]["reportAuthor"] == "Okstra lead"


def test_participants_show_a_served_model_other_than_asked_and_denied_writes(project):
    made, run = _run_with_writer(project, json.dumps(CONTENT))
    d = team_state.load(run.team_state).find("codex", 1)
    team_state.update_dispatch(
        run.team_state,
        "codex",
        d.attempt,
        lambda x: x.evolve(served_model="gpt-5.1-codex", denials=({"tool": "Write", "target": "/p/README.md"},)),
    )
    done = draft.draft(open_run(made.run_manifest_path), owner="Mina")
    doc = json.loads(done.data_path.read_text())
    assert schemas.problems("final-report-v2.0", doc) == []
    by = {(p.get("workerId"), p["role"]): p for p in doc["participants"]}
    codex = by[("codex", "analyst")]
    assert codex["servedModel"] == "gpt-5.1-codex"
    assert codex["deniedWrites"] == [{"tool": "Write", "target": "/p/README.md"}]
    assert "servedModel" not in by[("claude", "analyst")] and "deniedWrites" not in by[("claude", "analyst")]
    markdown = render.render_markdown(doc)
    assert "`gpt-5-codex` **served by `gpt-5.1-codex`**" in markdown and "| 1: Write `/p/README.md` |" in markdown


LIMIT = "rate-limited: You've hit your usage limit | upgrade to Pro; retry after 3:00 PM"


def _limited(run, worker):
    d = team_state.load(run.team_state).find(worker)
    team_state.update_dispatch(run.team_state, worker, d.attempt, lambda x: x.evolve(status=ERROR, reason=LIMIT))


def test_a_failover_stand_in_says_whom_it_stood_in_for_and_why_and_the_breaker_is_named(project):
    made = bundle.render(
        project,
        bundle.BundleRequest("demo/draft", "analysis", brief="a test task", workers=("claude", "codex"), backend="cli-wrapper"),
    )
    run = for_project(project).run(made.run_id)
    _finish(run, "claude", "# A\n", Usage(100, 10, 50, 0.25))
    _limited(run, "codex")
    failover.plan(run, open_run(made.run_manifest_path).manifest, catalog.load(project), {"analyst": ["codex", "kimi"]})
    _finish(run, "kimi-analyst", "# B\n", Usage(10, 1, 0, None))
    rounds.prepare(open_run(made.run_manifest_path), "report-writer")
    _finish(run, "claude", f"# Report\n\n```json\n{json.dumps(CONTENT)}\n```\n", Usage(1000, 100, 500, 0.5))
    doc = draft.draft(open_run(made.run_manifest_path)).document
    assert schemas.problems("final-report-v2.0", doc) == []
    by = {(p.get("workerId"), p["role"]): p for p in doc["participants"]}
    assert by[("kimi-analyst", "analyst")]["stoodInFor"] == [
        {"workerId": "codex", "attempt": 1, "provider": "Codex", "reason": LIMIT}
    ]
    assert not any("stoodInFor" in by[k] for k in by if k != ("kimi-analyst", "analyst"))
    assert doc["breakerOpen"] == ["Codex"]
    markdown = render.render_markdown(doc)
    assert (
        "- **Stood in:** `kimi-analyst` (Kimi, analyst) stood in for `codex` attempt 1 (Codex), "
        f"which hit a limit: {LIMIT}\n" in markdown
    )
    assert "- **Breaker open** (failover skips these providers for the rest of the run): Codex\n" in markdown
    assert markdown.index("## Participants") < markdown.index("**Stood in:**") < markdown.index("## Decisions Required")


def test_a_run_without_a_rate_limit_has_no_stand_in_or_breaker(project):
    made, _ = _run_with_writer(project, json.dumps(CONTENT))
    doc = draft.draft(open_run(made.run_manifest_path)).document
    assert "breakerOpen" not in doc and not any("stoodInFor" in p for p in doc["participants"])
    assert "Stood in" not in render.render_markdown(doc) and "Breaker open" not in render.render_markdown(doc)
