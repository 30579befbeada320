"""Every OKSTRA_* environment knob, resolved in one place.

`KNOBS` is the table the README lists; a test keeps the two in step.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

KNOBS: dict[str, str] = {
    "OKSTRA_ROOT": "okstra's home: install prefix and global config (default ~/.okstra)",
    "OKSTRA_DEBUG": "1 logs every external command and shows tracebacks of internal errors",
    "OKSTRA_PROJECT_ROOT": "the project root, when not found from the current directory",
    "OKSTRA_DEFAULT_WORKERS": "default roster of worker providers, e.g. claude,codex (overrides config default-workers)",
    "OKSTRA_DEFAULT_EXECUTOR": "default implementer provider (overrides config default-executor)",
    "OKSTRA_DEFAULT_BACKEND": "default terminal backend: cli-wrapper, tmux-pane or cmux-pane (overrides config backend)",
    "OKSTRA_REPORT_LANGUAGE": "language of the translated report, e.g. ko (overrides config report-language)",
    "OKSTRA_TMUX_SOCKET": "tmux server socket path for the tmux-pane backend (tmux -S PATH; default: the current server)",
    "OKSTRA_TMUX_MIN_LEAD_WIDTH": "columns the lead's tmux pane keeps at least when workers open beside it (default 100; else okstra's own window)",
    "OKSTRA_RUN_ID": "set by worker-run for the provider it runs: the run id",
    "OKSTRA_WORKER_ID": "set by worker-run for the provider it runs: the worker id",
    "OKSTRA_WORKER_ROLE": "set by worker-run for the provider it runs: the worker's role",
    "OKSTRA_RESULT_PATH": "set by worker-run for the provider it runs: the absolute recorded result path",
    "OKSTRA_EVIDENCE_DIR": "set by worker-run for the provider it runs: the absolute folder for the worker's evidence files",
    "OKSTRA_LAUNCH_GATE": "set by team-dispatch for the worker-runs it starts: the gate they wait at until it has returned",
}


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Settings:
    root: Path
    project_root: Path | None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        root = env.get("OKSTRA_ROOT") or str(Path(env.get("HOME", "~")) / ".okstra")
        project = env.get("OKSTRA_PROJECT_ROOT")
        return cls(
            root=Path(root).expanduser(),
            project_root=Path(project).expanduser() if project else None,
        )


def current() -> Settings:
    """Settings from the live environment (not cached: tests change it)."""
    return Settings.from_env()


def knob(name: str) -> str | None:
    """The raw value of one listed OKSTRA_* knob from the live environment (None when unset)."""
    if name not in KNOBS:
        raise KeyError(f"{name} is not an okstra knob")
    return os.environ.get(name)


def debug() -> bool:
    return _truthy(os.environ.get("OKSTRA_DEBUG"))


def tmux_min_lead_width() -> int:
    """OKSTRA_TMUX_MIN_LEAD_WIDTH: the lead pane's minimum width in columns (default 100)."""
    value = os.environ.get("OKSTRA_TMUX_MIN_LEAD_WIDTH", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else 100


def tmux_socket() -> str | None:
    """OKSTRA_TMUX_SOCKET: the tmux server to talk to (`tmux -S PATH`), else the default one."""
    return os.environ.get("OKSTRA_TMUX_SOCKET") or None
