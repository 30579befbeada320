"""The run manifest (DESIGN §2): what a run is, who is in it, where its files are.

Paths are project-relative, as stored. `schemas/run-manifest.schema.json`
validates the stored form; `from_dict` turns it into records once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from okstra.core import fsio
from okstra.core.errors import StateError

SCHEMA_VERSION = "1.0"
TASK_TYPES = ("analysis", "implementation-planning", "implementation", "verification", "release-handoff")
BACKENDS = ("cli-wrapper", "tmux-pane", "cmux-pane")


@dataclass(frozen=True)
class Participant:
    worker_id: str
    role: str
    provider: str
    provider_display: str
    model_id: str
    model_display: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "workerId": self.worker_id,
            "role": self.role,
            "provider": self.provider,
            "providerDisplay": self.provider_display,
            "modelId": self.model_id,
            "modelDisplay": self.model_display,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Participant:
        return cls(raw["workerId"], raw["role"], raw["provider"], raw["providerDisplay"], raw["modelId"], raw["modelDisplay"])


@dataclass(frozen=True)
class RoleExecution:
    role: str
    worker_id: str
    provider: str
    model_id: str
    runner: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "workerId": self.worker_id,
            "provider": self.provider,
            "modelId": self.model_id,
            "runner": self.runner,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> RoleExecution:
        return cls(raw["role"], raw["workerId"], raw["provider"], raw["modelId"], raw["runner"])


@dataclass(frozen=True)
class Assignment:
    """How one worker id is invoked: one provider, one model, one runner."""

    worker_id: str
    provider: str
    model_id: str
    cli_model: str
    runner: str
    roles: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "workerId": self.worker_id,
            "provider": self.provider,
            "modelId": self.model_id,
            "cliModel": self.cli_model,
            "runner": self.runner,
            "roles": list(self.roles),
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Assignment:
        return cls(raw["workerId"], raw["provider"], raw["modelId"], raw["cliModel"], raw["runner"], tuple(raw["roles"]))


@dataclass(frozen=True)
class RunManifest:
    run_id: str
    task_key: str
    task_type: str
    run_number: int
    report_number: int
    terminal_backend: str
    created_at: str
    run_dir: str
    team_state_path: str
    prompts_dir: str
    results_dir: str
    logs_dir: str
    reports_dir: str
    lead_pane_id: str | None = None
    report_language: str | None = None
    stage: int | None = None
    base_commit: str | None = None
    participants: tuple[Participant, ...] = ()
    role_executions: tuple[RoleExecution, ...] = ()
    assignments: tuple[Assignment, ...] = ()
    final_status: str | None = None
    active_run_context: Mapping[str, Any] = field(default_factory=dict)

    def assignment(self, worker_id: str) -> Assignment:
        for a in self.assignments:
            if a.worker_id == worker_id:
                return a
        known = ", ".join(a.worker_id for a in self.assignments) or "none"
        raise StateError(f"run {self.run_id} has no worker {worker_id!r}", hint=f"known workers: {known}")

    def evolve(self, **changes: Any) -> RunManifest:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schemaVersion": SCHEMA_VERSION,
            "runId": self.run_id,
            "taskKey": self.task_key,
            "taskType": self.task_type,
            "runNumber": self.run_number,
            "reportNumber": self.report_number,
            "terminalBackend": self.terminal_backend,
            "leadPaneId": self.lead_pane_id,
            "reportLanguage": self.report_language,
            "stage": self.stage,
            "baseCommit": self.base_commit,
            "createdAt": self.created_at,
            "runDir": self.run_dir,
            "teamStatePath": self.team_state_path,
            "promptsDir": self.prompts_dir,
            "resultsDir": self.results_dir,
            "logsDir": self.logs_dir,
            "reportsDir": self.reports_dir,
            "participants": [p.to_dict() for p in self.participants],
            "roleExecutions": [r.to_dict() for r in self.role_executions],
            "invocationAssignments": [a.to_dict() for a in self.assignments],
            "finalStatus": self.final_status,
            "activeRunContext": dict(self.active_run_context),
        }

    @classmethod
    def from_dict(cls, raw: Any, source: str = "run manifest") -> RunManifest:
        if not isinstance(raw, Mapping):
            raise StateError(f"{source}: not a run-manifest document (expected an object)")
        try:
            return cls(
                run_id=raw["runId"],
                task_key=raw["taskKey"],
                task_type=raw["taskType"],
                run_number=int(raw["runNumber"]),
                report_number=int(raw["reportNumber"]),
                terminal_backend=raw["terminalBackend"],
                created_at=raw["createdAt"],
                run_dir=raw["runDir"],
                team_state_path=raw["teamStatePath"],
                prompts_dir=raw["promptsDir"],
                results_dir=raw["resultsDir"],
                logs_dir=raw["logsDir"],
                reports_dir=raw["reportsDir"],
                lead_pane_id=raw.get("leadPaneId"),
                report_language=raw.get("reportLanguage"),
                stage=raw.get("stage"),
                base_commit=raw.get("baseCommit"),
                participants=tuple(Participant.from_dict(p) for p in raw.get("participants", [])),
                role_executions=tuple(RoleExecution.from_dict(r) for r in raw.get("roleExecutions", [])),
                assignments=tuple(Assignment.from_dict(a) for a in raw.get("invocationAssignments", [])),
                final_status=raw.get("finalStatus"),
                active_run_context=dict(raw.get("activeRunContext") or {}),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise StateError(f"{source}: not a valid run manifest: missing or bad field {exc}") from None


def load(path: Path) -> RunManifest:
    return RunManifest.from_dict(fsio.read_json(path, what="run manifest"), str(path))
