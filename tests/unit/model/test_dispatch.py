"""model.dispatch: the dispatch record (DESIGN §2), its statuses and the rate-limited reason class (§5)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from okstra.core import schemas
from okstra.core.errors import StateError
from okstra.model import dispatch as dm
from okstra.model.dispatch import Dispatch, Estimate, FailoverFrom, ScopeCheck, Usage

FULL = Dispatch(
    worker_id="codex-analyst",
    role="analyst",
    provider="codex",
    model_id="gpt-5-codex",
    status=dm.COMPLETED,
    attempt=2,
    round="analysis",
    pane_id="%7",
    prompt_path=".okstra/runs/feature--x--r001/prompts/codex-analyst.attempt-2.md",
    result_path=".okstra/runs/feature--x--r001/results/codex-analyst.attempt-2.md",
    log_path=".okstra/runs/feature--x--r001/logs/codex-analyst.attempt-2.log",
    liveness_mode="heartbeat",
    liveness_artifact=".okstra/runs/feature--x--r001/logs/codex-analyst.attempt-2.heartbeat",
    pid=4242,
    pgid=4242,
    pid_start_time="123456",
    child_pid=4243,
    child_start_time="123457",
    dispatched_at="2026-11-30T14:00:00.000Z",
    started_at="2026-11-30T14:00:01.000Z",
    finished_at="2026-11-30T14:05:12.345Z",
    exit_code=0,
    reason=None,
    usage=Usage(input_tokens=1200, output_tokens=340, cached_tokens=100, cost_usd=0.0123),
    scope_check=ScopeCheck("out-of-scope", ("src/a.py", "README.md"), ".okstra/x/scope.json", "two files"),
    estimate=Estimate(1100, 0.01),
    failover_from=FailoverFrom("claude-analyst", 1, "claude", "rate-limited: slow down"),
    cli_model="gpt-5-codex",
    served_model="gpt-5-codex",
    answer_path=".okstra/runs/feature--x--r001/logs/codex-analyst.attempt-2.answer",
    last_activity_at="2026-11-30T14:05:10.000Z",
    last_event="tool: Write src/a.py",
    denials=({"tool": "Bash", "target": "rm -rf /"},),
)


def _through_json(record: Dispatch) -> Dispatch:
    return Dispatch.from_dict(json.loads(json.dumps(record.to_dict())))


def test_the_terminal_statuses_are_completed_timeout_error_and_not_run():
    assert dm.TERMINAL_STATUSES == frozenset({"completed", "timeout", "error", "not-run"})
    assert dm.STATUSES == ("pending", "in-progress", "completed", "timeout", "error", "not-run")
    assert set(dm.STATUSES) - dm.TERMINAL_STATUSES == {"pending", "in-progress"}


@pytest.mark.parametrize("status", ["pending", "in-progress", "completed", "timeout", "error", "not-run"])
def test_a_record_is_terminal_exactly_when_its_status_is(status):
    record = Dispatch("w", "analyst", "claude", "m", status=status)
    assert record.terminal is dm.is_terminal(status) is (status in {"completed", "timeout", "error", "not-run"})


def test_the_team_state_schema_allows_exactly_these_statuses():
    doc = json.loads(schemas.path_of("team-state").read_text(encoding="utf-8"))
    found = json.dumps(doc)
    for status in dm.STATUSES:
        assert f'"{status}"' in found, status
    state = {
        "schemaVersion": "1.0",
        "runId": "feature--x--r001",
        "workerDispatches": [FULL.to_dict()],
        "seal": "sha256:" + "0" * 64,
    }
    assert schemas.problems("team-state", state) == []
    state["workerDispatches"][0]["status"] = "finished"
    assert [line.split(":")[0] for line in schemas.problems("team-state", state)] == ["$.workerDispatches[0].status"]


def test_a_full_record_survives_the_round_trip_through_json():
    assert _through_json(FULL) == FULL


def test_a_new_record_is_pending_attempt_1_and_stores_no_optional_blocks():
    record = Dispatch("claude-analyst", "analyst", "claude", "claude-sonnet-4-5")
    stored = record.to_dict()
    assert (record.status, record.attempt, record.liveness_mode) == ("pending", 1, "heartbeat")
    assert not {"scopeCheck", "estimate", "failoverFrom"} & stored.keys()
    assert stored["usage"] is None and stored["denials"] == []
    assert stored["workerId"] == "claude-analyst" and stored["modelId"] == "claude-sonnet-4-5"
    assert _through_json(record) == record


def test_a_record_is_frozen_and_evolve_gives_a_changed_copy():
    record = Dispatch("w", "analyst", "claude", "m")
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.status = dm.COMPLETED  # type: ignore[misc]
    done = record.evolve(status=dm.COMPLETED, exit_code=0)
    assert (record.status, done.status, done.exit_code, done.key) == ("pending", "completed", 0, ("w", 1))


def test_a_record_that_is_not_an_object_is_refused_naming_the_source():
    with pytest.raises(StateError, match=r"^runs/x/team-state.json: a dispatch record is not an object$"):
        Dispatch.from_dict(["codex"], "runs/x/team-state.json")


def test_a_record_lacking_its_identity_is_refused_naming_each_missing_field():
    with pytest.raises(StateError) as refused:
        Dispatch.from_dict({"workerId": "codex", "provider": "codex", "status": "pending", "modelId": ""})
    assert str(refused.value) == "team state: dispatch record lacks role, modelId"


def test_an_unknown_status_is_refused_with_the_statuses_it_may_have():
    raw = FULL.to_dict() | {"status": "done"}
    with pytest.raises(StateError) as refused:
        Dispatch.from_dict(raw, "ts.json")
    assert str(refused.value) == (
        "ts.json: dispatch 'codex-analyst' has status 'done'; "
        "expected one of pending, in-progress, completed, timeout, error, not-run"
    )


def test_malformed_optional_blocks_and_denials_are_dropped_not_crashed_on():
    raw = FULL.to_dict() | {"usage": "lots", "scopeCheck": ["x"], "denials": ["rm", {"tool": "Bash", "target": "x"}]}
    record = Dispatch.from_dict(raw)
    assert record.usage is None and record.scope_check is None
    assert record.denials == ({"tool": "Bash", "target": "x"},)


def test_a_rate_limited_reason_keeps_the_providers_text_and_its_retry_after():
    assert dm.rate_limited_reason("429 Too Many Requests", "30s") == "rate-limited: 429 Too Many Requests; retry after 30s"
    assert dm.rate_limited_reason("quota exceeded") == "rate-limited: quota exceeded"
    assert dm.rate_limited_reason(None) == "rate-limited"


@pytest.mark.parametrize(
    ("reason", "limited"),
    [
        ("rate-limited", True),
        ("rate-limited: quota exceeded; retry after 1h", True),
        (dm.rate_limited_reason(None, "5m"), True),
        ("rate-limitedness", False),
        ("error: rate-limited", False),
        ("exit 1", False),
        ("", False),
        (None, False),
    ],
)
def test_only_reasons_of_the_rate_limited_class_count_as_rate_limited(reason, limited):
    assert dm.is_rate_limited(reason) is limited


def test_a_model_mismatch_is_another_model_served_than_asked_context_suffix_aside():
    asked = Dispatch("w", "analyst", "claude", "claude-sonnet-4-5", cli_model="sonnet")
    assert not asked.model_mismatch
    assert not asked.evolve(served_model="claude-sonnet-4-5[1m]").model_mismatch
    assert not asked.evolve(served_model="sonnet").model_mismatch
    assert asked.evolve(served_model="claude-haiku-4-5").model_mismatch


def test_usage_estimate_scope_and_failover_each_round_trip_with_stored_names():
    assert Usage.from_dict(FULL.usage.to_dict()) == FULL.usage
    assert FULL.usage.to_dict() == {"inputTokens": 1200, "outputTokens": 340, "cachedTokens": 100, "costUsd": 0.0123}
    assert ScopeCheck.from_dict(FULL.scope_check.to_dict()) == FULL.scope_check
    assert Estimate.from_dict(FULL.estimate.to_dict()) == FULL.estimate
    assert FailoverFrom.from_dict(FULL.failover_from.to_dict()).to_dict() == {
        "workerId": "claude-analyst",
        "attempt": 1,
        "provider": "claude",
        "reason": "rate-limited: slow down",
    }
