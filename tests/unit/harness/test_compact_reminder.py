"""The compact reminder: nothing without a run; with one, the run, the team and the next
command, read from the active run, the manifest and the team state on disk."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest

from okstra.core import fsio
from okstra.harness import compact_reminder
from okstra.model import team_state
from okstra.model.dispatch import Dispatch
from okstra.model.layout import RunLayout
from okstra.model.run_manifest import RunManifest
from okstra.model.team_state import TeamState
from unit.harness.hookdata import RUN_DIR, RUN_ID, session_start_input, write_active_run

REPO = Path(__file__).resolve().parents[3]
MANIFEST = f"{RUN_DIR}/run-manifest.json"


def remind(root: Path, source: str = "compact", env: dict | None = None) -> str:
    out = io.StringIO()
    code = compact_reminder.main(
        stdin=io.BytesIO(session_start_input(root, source)),
        stdout=out,
        env=env if env is not None else {"CLAUDE_PROJECT_DIR": str(root)},
    )
    assert code == 0
    return out.getvalue()


def prepare(root: Path, statuses: dict[str, str], *, planned=None, task_type="analysis", final_status=None) -> RunLayout:
    write_active_run(root, planned, task_type=task_type)
    layout = RunLayout(root, RUN_ID)
    manifest = RunManifest(
        run_id=RUN_ID,
        task_key="feature/rate-limit",
        task_type=task_type,
        run_number=1,
        report_number=1,
        terminal_backend="cli-wrapper",
        created_at="2026-11-30T10:00:00Z",
        run_dir=RUN_DIR,
        team_state_path=f"{RUN_DIR}/team-state.json",
        prompts_dir=f"{RUN_DIR}/prompts",
        results_dir=f"{RUN_DIR}/results",
        logs_dir=f"{RUN_DIR}/logs",
        reports_dir=f"{RUN_DIR}/reports",
        final_status=final_status,
    )
    fsio.write_json(layout.manifest, manifest.to_dict())
    roles = {
        "claude-analyst": ("analyst", "claude", "claude-opus-4"),
        "codex-analyst": ("analyst", "codex", "gpt-5-codex"),
        "codex-report-writer": ("report-writer", "codex", "gpt-5-codex"),
    }
    dispatches = tuple(
        Dispatch(
            worker_id=w,
            role=roles[w][0],
            provider=roles[w][1],
            model_id=roles[w][2],
            status=s,
            reason="exit 1: API Error 529" if s == "error" else None,
            result_path=layout.relative(layout.result_path(w)),
        )
        for w, s in statuses.items()
    )
    team_state.write(layout.team_state, TeamState(RUN_ID, dispatches))
    return layout


def next_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("Next:"))


def test_nothing_without_an_active_run(project):
    assert remind(project) == ""


def test_nothing_for_another_session_start_source(project):
    prepare(project, {"claude-analyst": "in-progress"})
    assert remind(project, source="startup") == ""


def test_the_run_the_team_and_worker_wait_while_workers_run(project):
    prepare(project, {"claude-analyst": "in-progress", "codex-analyst": "completed"})
    text = remind(project)
    assert f"Run:      {RUN_ID} (task feature/rate-limit, type analysis, phase analysis)" in text
    assert "Stage:    none approved" in text
    assert any(line.split()[:3] == ["claude-analyst", "analyst", "claude/claude-opus-4"] for line in text.splitlines())
    assert "in-progress" in text and "completed" in text
    assert next_line(text).startswith(f"Next:     worker-wait --run-manifest {MANIFEST} (in progress: claude-analyst)")


def test_pending_workers_mean_team_dispatch(project):
    prepare(project, {"claude-analyst": "pending", "codex-analyst": "pending"})
    assert next_line(remind(project)).startswith(
        f"Next:     team-dispatch --run-manifest {MANIFEST} (pending: claude-analyst, codex-analyst)"
    )


def test_all_terminal_and_no_report_means_reclaim_then_the_report(project):
    prepare(project, {"claude-analyst": "completed", "codex-analyst": "error"})
    line = next_line(remind(project))
    assert line.startswith(f"Next:     team-reclaim --run-manifest {MANIFEST}")
    assert "PROGRESS: phase-batch-cleanup panes=<n>" in line
    assert "render-final-report" in line and "report-finalize" in line
    assert "codex-analyst error" in line and "--redispatch" in line
    assert "(exit 1: API Error 529)" in remind(project)


def test_report_data_without_a_finalized_report_means_report_finalize(project):
    layout = prepare(project, {"claude-analyst": "completed", "codex-report-writer": "completed"})
    fsio.write_json(layout.report_data("analysis", 1), {"schemaVersion": "2.0"})
    assert f"then report-finalize --run-manifest {MANIFEST}" in next_line(remind(project))


def test_a_finalized_report_without_answers_means_the_user_gate(project):
    layout = prepare(project, {"claude-analyst": "completed"}, final_status="completed")
    fsio.atomic_write(layout.report_markdown("analysis", 1), "# report\n")
    line = next_line(remind(project))
    assert "PROGRESS: phase-gate-cleanup panes=<n>" in line
    assert f"user-response-show --report {RUN_DIR}/reports/final-report-analysis-001.md" in line


def test_answers_recorded_mean_act_on_them_and_the_stage_queue(project):
    layout = prepare(
        project, {"claude-analyst": "completed"}, planned=("src/**",), task_type="implementation", final_status="completed"
    )
    fsio.atomic_write(layout.report_markdown("implementation", 1), "# report\n")
    fsio.atomic_write(layout.sidecar("implementation", 1), "# answers\n")
    text = remind(project)
    assert "Stage:    2 — Limiter core: 1 planned path(s)" in text
    line = next_line(text)
    assert "stage-map PLAN --task-key feature/rate-limit --next" in line and f"team-teardown --run-manifest {MANIFEST}" in line


def test_a_broken_team_state_is_reported_not_raised(project):
    layout = prepare(project, {"claude-analyst": "completed"})
    layout.team_state.write_text("{nope")
    text = remind(project)
    assert "Team state unreadable" in text
    assert next_line(text).startswith("Next:     team-status")


def test_a_broken_active_run_is_one_line(project):
    (project / ".okstra").mkdir()
    (project / ".okstra" / "active-run.json").write_text("[]")
    assert "exists but cannot be read" in remind(project)


def test_no_project_dir_finds_the_run_from_the_cwd(project):
    prepare(project, {"claude-analyst": "in-progress"})
    (project / "sub").mkdir()
    out = io.StringIO()
    compact_reminder.main(stdin=io.BytesIO(session_start_input(project / "sub")), stdout=out, env={})
    assert "worker-wait" in out.getvalue()


@pytest.mark.parametrize("with_run", [False, True])
def test_the_real_door(project, with_run):
    if with_run:
        prepare(project, {"claude-analyst": "in-progress"})
    done = subprocess.run(
        [str(REPO / "hooks" / "compact-reminder")],
        input=session_start_input(project),
        capture_output=True,
        env={"CLAUDE_PROJECT_DIR": str(project), "PATH": "/usr/bin:/bin:" + str(Path(__import__("sys").executable).parent)},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert (b"worker-wait" in done.stdout) == with_run
    assert done.stdout == b"" or with_run
