"""run.failover: a rate-limited worker's role goes to the next provider of its fallback list (DESIGN §5).

Runs are prepared by the real render-bundle (fixtures.team.prepare, worker ids = provider ids);
a worker "hits a limit" by its record ending `error` with a `rate-limited` reason, as worker-run
writes it. Nothing is launched: `plan` only writes prompts, team state and manifest.
"""

from __future__ import annotations

import pytest

from fixtures.runs import set_dispatch
from fixtures.team import prepare
from okstra.core import schemas
from okstra.core.errors import RefusedError
from okstra.model import run_manifest, team_state
from okstra.model.dispatch import COMPLETED, ERROR, IN_PROGRESS, PENDING, rate_limited_reason
from okstra.run import catalog, failover, prompts

LIMIT = rate_limited_reason("429 Too Many Requests", "30s")
ORDER = {"analyst": ["codex", "claude", "antigravity"]}


def _limit(run, worker_id: str, reason: str = LIMIT):
    return set_dispatch(run.layout, worker_id, status=ERROR, reason=reason, exit_code=1)


def _plan(run, fallback=ORDER):
    manifest = run_manifest.load(run.layout.manifest)
    return failover.plan(run.layout, manifest, catalog.load(run.root), fallback)


def _files(run):
    return {
        p.relative_to(run.layout.dir).as_posix(): p.read_bytes()
        for p in sorted(run.layout.dir.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


def test_a_limited_worker_stands_in_on_the_next_provider_of_its_roles_list(project):
    run = prepare(project, ["codex"], backend="cli-wrapper")
    _limit(run, "codex")
    plan = _plan(run)
    assert plan.skipped == () and plan.breakers == ("codex",)
    (stand_in,) = plan.stand_ins
    new = stand_in.dispatch
    assert (new.worker_id, new.provider, new.model_id, new.attempt, new.status, new.role) == (
        "claude-analyst",
        "claude",
        "claude-sonnet-4-5",
        1,
        PENDING,
        "analyst",
    )
    assert new.failover_from.to_dict() == {"workerId": "codex", "attempt": 1, "provider": "codex", "reason": LIMIT}
    assert stand_in.replaces.key == ("codex", 1)
    assert team_state.load(run.layout.team_state).find("claude-analyst") == new


def test_the_stand_in_is_added_to_the_manifest_so_the_report_names_who_stood_in(project):
    run = prepare(project, ["codex"], backend="cli-wrapper")
    _limit(run, "codex")
    _plan(run)
    manifest = run_manifest.load(run.layout.manifest)
    assert manifest.assignment("claude-analyst").roles == ("analyst",)
    assert [(p.worker_id, p.role) for p in manifest.participants if p.role == "analyst"] == [
        ("codex", "analyst"),
        ("claude-analyst", "analyst"),
    ]
    assert any(r.worker_id == "claude-analyst" and r.role == "analyst" for r in manifest.role_executions)
    assert schemas.problems("run-manifest", manifest.to_dict()) == []


def test_the_stand_ins_prompt_is_its_own_and_keeps_the_prompt_contract(project):
    run = prepare(project, ["codex"], backend="cli-wrapper")
    _limit(run, "codex")
    (stand_in,) = _plan(run).stand_ins
    text = run.layout.prompt_path("claude-analyst").read_text(encoding="utf-8")
    manifest = run_manifest.load(run.layout.manifest)
    assert prompts.check(text, manifest, stand_in.dispatch, catalog.load(run.root)) == []
    assert text.count("**Model:**") == 1 and "**Model:** Claude Sonnet 4.5, claude-sonnet-4-5" in text
    assert f"You stand in for worker `codex` (codex), which stopped on a rate limit ({LIMIT})" in text
    assert stand_in.dispatch.prompt_path == run.layout.relative(run.layout.prompt_path("claude-analyst"))


def test_an_open_breaker_skips_a_provider_that_hit_a_limit_in_this_run(project):
    run = prepare(project, ["codex", "claude"], backend="cli-wrapper")
    _limit(run, "codex")
    _limit(run, "claude", rate_limited_reason("quota exceeded"))
    plan = _plan(run)
    assert plan.breakers == ("codex", "claude")
    # codex's next in the list is claude, whose breaker is open: antigravity stands in.
    # claude's next is antigravity too (codex comes before it in the list).
    assert [(s.replaces.worker_id, s.dispatch.worker_id) for s in plan.stand_ins] == [
        ("codex", "antigravity-analyst"),
        ("claude", "antigravity-analyst-2"),
    ]


def test_a_limited_provider_not_in_the_list_fails_over_to_the_first_usable_one(project):
    run = prepare(project, ["grok"], backend="cli-wrapper")
    _limit(run, "grok")
    (stand_in,) = _plan(run).stand_ins
    assert stand_in.dispatch.provider == "codex"


def test_a_role_without_a_list_is_skipped_saying_where_to_set_one_and_nothing_is_written(project):
    run = prepare(project, ["codex"], backend="cli-wrapper")
    _limit(run, "codex")
    before = _files(run)
    plan = _plan(run, {"critic": ["claude"]})
    assert plan.stand_ins == ()
    assert plan.skipped == ("codex: no failover list for the analyst role (failover.analyst in config)",)
    assert plan.breakers == ("codex",)
    assert _files(run) == before


def test_a_list_with_no_provider_left_is_skipped_naming_the_list_and_the_breakers(project):
    run = prepare(project, ["codex", "claude"], backend="cli-wrapper")
    _limit(run, "codex")
    _limit(run, "claude")
    before = _files(run)
    plan = _plan(run, {"analyst": ["codex", "claude"]})
    assert plan.stand_ins == ()
    assert plan.skipped == (
        "codex: no provider left for analyst after codex (list codex, claude; breaker open for codex, claude)",
        "claude: no provider left for analyst after claude (list codex, claude; breaker open for codex, claude)",
    )
    assert _files(run) == before


def test_a_limited_attempt_already_stood_in_for_is_not_failed_over_again(project):
    run = prepare(project, ["codex"], backend="cli-wrapper")
    _limit(run, "codex")
    assert len(_plan(run).stand_ins) == 1
    before = _files(run)
    again = _plan(run)
    assert again.stand_ins == () and again.skipped == ()
    assert _files(run) == before


@pytest.mark.parametrize(
    ("status", "reason"),
    [(IN_PROGRESS, None), (COMPLETED, None), (ERROR, "provider exited 1: boom"), (ERROR, "terminated by SIGTERM")],
)
def test_only_a_terminal_rate_limited_attempt_fails_over(project, status, reason):
    run = prepare(project, ["codex"], backend="cli-wrapper")
    set_dispatch(run.layout, "codex", status=status, reason=reason)
    before = _files(run)
    plan = _plan(run)
    assert (plan.stand_ins, plan.skipped, plan.breakers) == ((), (), ())
    assert _files(run) == before


def test_a_finished_worker_on_the_next_provider_runs_the_stand_in_as_its_next_attempt(project):
    run = prepare(project, ["codex", "claude"], backend="cli-wrapper")
    set_dispatch(run.layout, "claude", status=COMPLETED, exit_code=0)
    _limit(run, "codex")
    manifest_before = run.layout.manifest.read_bytes()
    (stand_in,) = _plan(run).stand_ins
    new = stand_in.dispatch
    assert (new.worker_id, new.attempt, new.model_id) == ("claude", 2, run.manifest.assignment("claude").model_id)
    assert new.prompt_path == run.layout.relative(run.layout.prompt_path("claude", 2))
    assert new.result_path == run.layout.relative(run.layout.result_path("claude", 2))
    assert run.layout.manifest.read_bytes() == manifest_before


def test_a_busy_worker_on_the_next_provider_is_left_alone_and_a_new_worker_stands_in(project):
    run = prepare(project, ["codex", "claude"], backend="cli-wrapper")
    set_dispatch(run.layout, "claude", status=IN_PROGRESS)
    _limit(run, "codex")
    (stand_in,) = _plan(run).stand_ins
    assert (stand_in.dispatch.worker_id, stand_in.dispatch.attempt) == ("claude-analyst", 1)
    assert team_state.load(run.layout.team_state).find("claude").status == IN_PROGRESS


def test_two_limited_workers_sent_to_one_provider_get_two_workers(project):
    run = prepare(project, ["codex", "grok"], backend="cli-wrapper")
    _limit(run, "codex")
    _limit(run, "grok")
    plan = _plan(run, {"analyst": ["codex", "grok", "claude"]})
    assert [(s.replaces.worker_id, s.dispatch.worker_id) for s in plan.stand_ins] == [
        ("codex", "claude-analyst"),
        ("grok", "claude-analyst-2"),
    ]
    state = team_state.load(run.layout.team_state)
    assert {d.worker_id for d in state.latest()} == {"codex", "grok", "claude-analyst", "claude-analyst-2"}


def test_a_stand_in_recorded_meanwhile_refuses_the_plan(project, monkeypatch):
    # Another team-dispatch --failover recorded the same stand-in between this one's read of the
    # team state and its locked write: replay that read to hit the window deterministically.
    run = prepare(project, ["codex"], backend="cli-wrapper")
    _limit(run, "codex")
    manifest = run_manifest.load(run.layout.manifest)
    cat = catalog.load(run.root)
    stale = team_state.load(run.layout.team_state)
    assert len(failover.plan(run.layout, manifest, cat, ORDER).stand_ins) == 1
    recorded = run.layout.team_state.read_bytes()
    monkeypatch.setattr(team_state, "load", lambda path: stale)
    with pytest.raises(RefusedError) as refused:
        failover.plan(run.layout, manifest, cat, ORDER)
    assert str(refused.value) == "--failover: claude-analyst changed meanwhile; run team-dispatch --failover again"
    assert run.layout.team_state.read_bytes() == recorded


def test_a_refused_plan_writes_no_prompt_and_no_manifest(project, monkeypatch):
    # The same window as above: the refusal comes before the stand-in's prompt and the
    # manifest's new assignment are written, so neither file is replaced.
    run = prepare(project, ["codex"], backend="cli-wrapper")
    _limit(run, "codex")
    manifest = run_manifest.load(run.layout.manifest)
    cat = catalog.load(run.root)
    stale = team_state.load(run.layout.team_state)
    (stand_in,) = failover.plan(run.layout, manifest, cat, ORDER).stand_ins
    prompt = run.layout.prompt_path(stand_in.dispatch.worker_id, stand_in.dispatch.attempt)
    before = {p: p.stat().st_ino for p in (prompt, run.layout.manifest)}
    monkeypatch.setattr(team_state, "load", lambda path: stale)
    with pytest.raises(RefusedError):
        failover.plan(run.layout, manifest, cat, ORDER)
    assert {p: p.stat().st_ino for p in before} == before


def test_a_stand_in_of_a_stand_in_names_the_attempt_it_replaces(project):
    run = prepare(project, ["codex"], backend="cli-wrapper")
    _limit(run, "codex")
    _plan(run)
    _limit(run, "claude-analyst")
    plan = _plan(run)
    (stand_in,) = plan.stand_ins
    assert plan.breakers == ("codex", "claude")
    assert stand_in.dispatch.worker_id == "antigravity-analyst"
    assert stand_in.to_dict() == {
        "workerId": "antigravity-analyst",
        "attempt": 1,
        "provider": "antigravity",
        "modelId": stand_in.dispatch.model_id,
        "role": "analyst",
        "standsInFor": {"workerId": "claude-analyst", "attempt": 1, "provider": "claude", "reason": LIMIT},
    }


def test_a_limit_reported_with_only_a_retry_after_fails_over_too(project):
    run = prepare(project, ["codex"], backend="cli-wrapper")
    _limit(run, "codex", rate_limited_reason(None, "5m"))
    plan = _plan(run)
    assert plan.breakers == ("codex",)
    assert [s.dispatch.worker_id for s in plan.stand_ins] == ["claude-analyst"]
