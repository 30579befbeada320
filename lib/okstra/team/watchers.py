"""Watcher panes: long-lived `tail -F` views of a run's worker logs (DESIGN §6).

A watcher is tagged with its own kind (`watcher`) and recorded apart from the
dispatch records (`runs/<id>/watchers.json`), so `team-reclaim` and
`team-teardown`, which close only the panes of dispatches, never close one.
Only the explicit, run-scoped `stop()` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from okstra.core import fsio, schemas
from okstra.core.clock import now_iso
from okstra.core.errors import RefusedError, StateError
from okstra.model.layout import Run
from okstra.team.backends import base
from okstra.team.backends.base import WATCHER, Closed, LaunchSpec

TAIL_LINES = "20"


@dataclass(frozen=True)
class Watcher:
    watcher_id: str
    pane_id: str
    pid: int | None
    started_at: str
    workers: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "watcherId": self.watcher_id,
            "paneId": self.pane_id,
            "pid": self.pid,
            "startedAt": self.started_at,
            "workers": list(self.workers),
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Watcher:
        return cls(raw["watcherId"], raw["paneId"], raw.get("pid"), raw["startedAt"], tuple(raw.get("workers", ())))


def _default() -> dict[str, Any]:
    return {"schemaVersion": "1.0", "watchers": []}


def recorded(run: Run) -> list[Watcher]:
    path = run.layout.watchers
    if not path.exists():
        return []
    raw = fsio.read_json(path, what="watchers file")
    schemas.check_state("watchers", raw, str(path))
    try:
        return [Watcher.from_dict(w) for w in raw["watchers"]]
    except (KeyError, TypeError) as exc:
        raise StateError(f"{path}: not a watchers document ({exc})", hint="remove the file; its panes stay open") from None


def open_watcher(run: Run, workers: tuple[str, ...] = ()) -> Watcher:
    """Open one watcher pane tailing the newest attempt's log of each chosen worker."""
    backend = base.for_run(run)
    if not backend.has_panes:
        raise RefusedError(
            f"run {run.manifest.run_id} uses the {backend.name} backend, which has no panes to watch in",
            hint=f"follow the logs yourself: tail -F {run.layout.relative(run.layout.logs_dir)}/*.log",
        )
    state = run.state()
    chosen = [state.find(w) for w in workers] if workers else list(state.latest())
    logs = [str(run.resolve(d.log_path, f"{d.worker_id} logPath")) for d in chosen if d.log_path]
    if not logs:
        raise RefusedError(f"run {run.manifest.run_id} has no worker logs to watch", hint="dispatch the workers first")
    number = len(recorded(run)) + 1
    watcher_id = f"watcher-{number}"
    spec = LaunchSpec(
        worker_id=watcher_id,
        attempt=1,
        argv=("tail", "-n", TAIL_LINES, "-F", *logs),
        title=f"okstra watch {run.manifest.run_id}",
        log_path=run.layout.logs_dir / f"{watcher_id}.log",
        cwd=run.root,
        kind=WATCHER,
    )
    launched = backend.launch([spec])[0]
    watcher = Watcher(watcher_id, launched.pane_id or "", launched.pid, now_iso("seconds"), tuple(d.worker_id for d in chosen))

    def add(doc: dict[str, Any]) -> bool:
        doc.setdefault("watchers", []).append(watcher.to_dict())
        schemas.check_state("watchers", doc, str(run.layout.watchers))
        return True

    fsio.update_json(run.layout.watchers, add, default=_default)
    return watcher


def stop(run: Run, *, dry_run: bool = False) -> Closed:
    """Close this run's watcher panes (the only way they close) and forget them."""
    watchers = recorded(run)
    if not watchers:
        return Closed()
    closed = base.for_run(run).close([w.pane_id for w in watchers], dry_run=dry_run)
    if not dry_run:
        fsio.update_json(run.layout.watchers, lambda doc: doc.update(watchers=[]) is None, default=_default)
    return closed
