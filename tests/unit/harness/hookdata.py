"""Shared helpers for the harness tests: real-shaped hook inputs and an active run
written the way render-bundle writes it (model records through core.fsio)."""

from __future__ import annotations

import json
from pathlib import Path

from okstra.model import active_run
from okstra.model.active_run import ActiveRun, ApprovedStage

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hooks"
RUN_ID = "feature--rate-limit--r001"
RUN_DIR = f".okstra/runs/{RUN_ID}"
TOOL_FIXTURE = {
    "Write": "pretooluse-write.json",
    "Edit": "pretooluse-edit.json",
    "MultiEdit": "pretooluse-multiedit.json",
    "NotebookEdit": "pretooluse-notebookedit.json",
    "Bash": "pretooluse-bash.json",
}


def hook_input(tool: str, *, cwd: Path | str, path: str | Path = "", command: str = "") -> bytes:
    """A PreToolUse input for `tool`, from the recorded fixture, as stdin bytes."""
    doc = json.loads((FIXTURES / TOOL_FIXTURE[tool]).read_text(encoding="utf-8"))
    doc["cwd"] = str(cwd)
    key = {"Bash": "command", "NotebookEdit": "notebook_path"}.get(tool, "file_path")
    doc["tool_input"][key] = command if tool == "Bash" else str(path)
    return json.dumps(doc).encode("utf-8")


def session_start_input(cwd: Path | str, source: str = "compact") -> bytes:
    doc = json.loads((FIXTURES / "sessionstart-compact.json").read_text(encoding="utf-8"))
    doc["cwd"] = str(cwd)
    doc["source"] = source
    return json.dumps(doc).encode("utf-8")


def write_active_run(
    root: Path,
    planned: tuple[str, ...] | None = None,
    *,
    task_type: str | None = None,
    title: str = "Limiter core",
    allowed: tuple[str, ...] = (),
) -> ActiveRun:
    stage = ApprovedStage(2, title, planned, "0123abc") if planned is not None else None
    run = ActiveRun(
        run_id=RUN_ID,
        task_key="feature/rate-limit",
        task_type=task_type or ("implementation" if stage else "analysis"),
        run_dir=RUN_DIR,
        run_manifest_path=f"{RUN_DIR}/run-manifest.json",
        phase="implementation" if stage else "analysis",
        stage=stage,
        allowed_commands=allowed,
    )
    active_run.write_file(root, run.to_dict())
    (root / RUN_DIR / "reports" / "user-responses").mkdir(parents=True, exist_ok=True)
    (root / RUN_DIR / "results").mkdir(parents=True, exist_ok=True)
    return run


def worker_env(root: Path, role: str, worker_id: str | None = None) -> dict[str, str]:
    """The environment worker-run gives a worker's child process."""
    worker_id = worker_id or f"codex-{role}"
    return {
        "OKSTRA_RUN_ID": RUN_ID,
        "OKSTRA_WORKER_ID": worker_id,
        "OKSTRA_WORKER_ROLE": role,
        "OKSTRA_PROJECT_ROOT": str(root),
        "OKSTRA_RESULT_PATH": str(root / RUN_DIR / "results" / f"{worker_id}.md"),
        "OKSTRA_EVIDENCE_DIR": str(root / RUN_DIR / "results" / f"{worker_id}.evidence"),
    }


def sidecar_path(root: Path) -> Path:
    return root / RUN_DIR / "reports" / "user-responses" / "user-response-implementation-001.md"
