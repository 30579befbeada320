"""One small interface for the three terminal backends (DESIGN §6).

`registry.for_run()` is the only place that branches on the manifest's
`terminalBackend`; everything else talks to a `Backend`:

- `launch(specs)` starts one process per spec (a pane, a surface or a
  detached background process) and returns at once with what it recorded;
- `close(ids)` closes exactly the given recorded ids (never panes found by
  title), in as few client calls as the backend allows, and gives the lead
  pane back its width; `dry_run=True` says what it would close;
- `check_pane_id(value)` refuses a stored id that is not one of this
  backend's ids before anything is touched.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from okstra.core.errors import ProcessError, StateError

WORKER = "worker"
WATCHER = "watcher"

# What a launched process inherits from the dispatcher besides the pane's own
# environment: okstra's knobs (and the fakes' modes in tests), PATH and HOME.
PASSED_ENV = ("PATH", "HOME")


def passed_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    environ = os.environ if environ is None else environ
    return {k: v for k, v in sorted(environ.items()) if k in PASSED_ENV or k.startswith("OKSTRA_")}


@dataclass(frozen=True)
class LaunchSpec:
    """One process to start: `argv` runs in `cwd`; `log_path` takes its output when it has no pane."""

    worker_id: str
    attempt: int
    argv: tuple[str, ...]
    title: str
    log_path: Path
    cwd: Path
    kind: str = WORKER


@dataclass(frozen=True)
class Launched:
    spec: LaunchSpec
    pane_id: str | None
    pid: int | None


@dataclass(frozen=True)
class Closed:
    """`closed`: ids closed (or, on a dry run, that would be); `gone`: recorded ids no longer
    open or no longer okstra's (left alone); `warnings`: a later step that failed after the
    panes were closed (the lead's width restore), one line each."""

    closed: tuple[str, ...] = ()
    gone: tuple[str, ...] = ()
    lead_restored: bool = False
    warnings: tuple[str, ...] = ()


@dataclass
class Backend(ABC):
    run_id: str
    project_root: Path
    lead_pane_id: str | None = None
    env: dict[str, str] = field(default_factory=passed_env)

    name: ClassVar[str]
    has_panes: ClassVar[bool]

    def unusable_here(self) -> str | None:
        """Why this backend cannot work on this machine now (checked at render-bundle, so a
        run is never prepared for a terminal that is not there), or None."""
        return None

    @abstractmethod
    def check_pane_id(self, value: str, source: str) -> str:
        """Return `value` when it is one of this backend's ids; else raise StateError."""

    @abstractmethod
    def launch(self, specs: Sequence[LaunchSpec]) -> list[Launched]:
        """Start every spec; return what started, in order."""

    @abstractmethod
    def close(self, pane_ids: Sequence[str], *, dry_run: bool = False) -> Closed:
        """Close exactly these recorded ids (only those still open and okstra's)."""

    def tagged(self, kind: str) -> list[str]:
        """Ids of this run's open panes tagged `kind`, recorded or not: a recorder killed between
        launch and record leaves one only its tags name. [] where panes carry no tags."""
        return []


class PartialLaunch(ProcessError):
    """Some specs started and the rest did not: `launched` still has to be recorded."""

    def __init__(self, message: str, launched: list[Launched], *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.launched = launched


def bad_pane_id(backend: str, value: object, source: str) -> StateError:
    return StateError(
        f"{source}: {value!r} is not a {backend} pane id",
        hint="the team state was edited by hand or belongs to another backend; fix or remove that paneId",
    )
