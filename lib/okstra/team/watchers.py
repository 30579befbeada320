"""Watcher panes: a long-lived, readable live feed of a run's workers (DESIGN §6).

The pane runs `team-watch --feed`: `follow()` reads the newest attempt's log of
each worker as it grows and turns every provider event (team.output's
`parse_event`, per the provider's output format) into one line: time, worker,
what happened (a tool call, a message excerpt, a retry, the result) and the
tokens the worker has used so far. Banners and blank lines are left out.

A watcher is tagged with its own kind (`watcher`) and recorded apart from the
dispatch records (`runs/<id>/watchers.json`), so `team-reclaim` and
`team-teardown`, which close only the panes of dispatches, never close one.
Only the explicit, run-scoped `stop()` does (also a watcher pane its team-watch,
killed between launch and record, never recorded: its tags name it). A watcher's
number is chosen inside the locked update of `watchers.json` that records it, and
its pane is launched there under that id: concurrent team-watch calls get distinct
ids and none is lost.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra.core import cli, fsio, schemas
from okstra.core.clock import now_iso
from okstra.core.errors import RefusedError, StateError
from okstra.model.layout import Run
from okstra.team.backends import registry
from okstra.team.backends.base import WATCHER, Closed, LaunchSpec
from okstra.team.output import NOISE, Event, parse_event

WORKER_WIDTH = 14
POLL_SECONDS = 0.2
RESCAN_SECONDS = 2.0  # how often a redispatch's new attempt log is picked up


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
    backend = registry.for_run(run)
    if not backend.has_panes:
        raise RefusedError(
            f"run {run.manifest.run_id} uses the {backend.name} backend, which has no panes to watch in",
            hint=f"follow the logs yourself: tail -F {run.layout.relative(run.layout.logs_dir)}/*.log",
        )
    state = run.state()
    chosen = [state.find(w) for w in workers] if workers else list(state.latest())
    if not any(d.log_path for d in chosen):
        raise RefusedError(f"run {run.manifest.run_id} has no worker logs to watch", hint="dispatch the workers first")
    # The pane runs this same interpreter (the install's venv) on team-watch's feed.
    argv = [sys.executable, str(cli.BIN_DIR / "team-watch"), "--feed", "--run-manifest", str(run.layout.manifest)]
    for d in chosen if workers else ():
        argv += ["--worker", d.worker_id]
    made: list[Watcher] = []

    def add(doc: dict[str, Any]) -> bool:
        # The number is chosen, the pane launched under it and the watcher recorded in one
        # locked update, so two team-watch calls at once never share an id (DESIGN §6).
        schemas.check_state("watchers", doc, str(run.layout.watchers))
        number = max((int(w["watcherId"].rsplit("-", 1)[1]) for w in doc["watchers"]), default=0) + 1
        watcher_id = f"watcher-{number}"
        spec = LaunchSpec(
            worker_id=watcher_id,
            attempt=1,
            argv=tuple(argv),
            title=f"okstra watch {run.manifest.run_id}",
            log_path=run.layout.logs_dir / f"{watcher_id}.log",
            cwd=run.root,
            kind=WATCHER,
        )
        launched = backend.launch([spec])[0]
        made.append(
            Watcher(watcher_id, launched.pane_id or "", launched.pid, now_iso("seconds"), tuple(d.worker_id for d in chosen))
        )
        doc["watchers"].append(made[0].to_dict())
        schemas.check_state("watchers", doc, str(run.layout.watchers))
        return True

    fsio.update_json(run.layout.watchers, add, default=_default)
    return made[0]


def stop(run: Run, *, dry_run: bool = False) -> Closed:
    """Close this run's watcher panes (the only way they close) and forget them: the recorded
    ones and any pane tagged as this run's watcher that a team-watch killed before recording
    it left behind."""
    watchers = recorded(run)
    backend = registry.for_run(run)
    ids = [w.pane_id for w in watchers] + (backend.tagged(WATCHER) if backend.has_panes else [])
    if not ids:
        return Closed()
    closed = backend.close(list(dict.fromkeys(ids)), dry_run=dry_run)
    if not dry_run:
        fsio.update_json(run.layout.watchers, lambda doc: doc.update(watchers=[]) is None, default=_default)
    return closed


# -- the live feed -------------------------------------------------------------------


def feed_line(worker: str, event: Event, tokens: int | None, at: float) -> str:
    """`12:03:04  codex           tool   shell pytest -q            tokens 12,345`"""
    clock = time.strftime("%H:%M:%S", time.localtime(at))
    used = f"tokens {tokens:,}" if tokens is not None else "tokens -"
    return f"{clock}  {worker[:WORKER_WIDTH].ljust(WORKER_WIDTH)}  {event.kind:<7}  {event.text}  ({used})"


@dataclass
class _Tail:
    path: Path
    output_format: str
    offset: int = 0
    partial: bytes = b""
    tokens: int | None = None


def follow(
    sources: Callable[[], Mapping[str, tuple[Path, str]]],
    emit: Callable[[str], None],
    *,
    keep_going: Callable[[], bool] = lambda: True,
    clock: Callable[[], float] = time.time,
) -> None:
    """Emit one feed line per provider event of each worker's log, as the logs grow.

    `sources()` names each worker's newest log and its provider's output format; it is
    asked again every RESCAN_SECONDS, so a redispatched worker's new attempt is followed."""
    tails: dict[str, _Tail] = {}
    last_scan = float("-inf")
    while True:
        if time.monotonic() - last_scan >= RESCAN_SECONDS:
            last_scan = time.monotonic()
            for worker, (path, output_format) in sources().items():
                if worker not in tails or tails[worker].path != path:
                    tails[worker] = _Tail(path, output_format)
        for worker, tail in tails.items():
            for line in _new_lines(tail):
                event = parse_event(tail.output_format, line)
                if event is None or event.kind == NOISE:
                    continue
                if event.tokens is not None:
                    tail.tokens = event.tokens
                emit(feed_line(worker, event, tail.tokens, clock()))
        if not keep_going():
            return
        time.sleep(POLL_SECONDS)


def _new_lines(tail: _Tail) -> list[bytes]:
    try:
        with open(tail.path, "rb") as handle:
            handle.seek(tail.offset)
            chunk = handle.read()
    except OSError:
        return []  # not written yet (a worker still starting)
    tail.offset += len(chunk)
    lines = (tail.partial + chunk).split(b"\n")
    tail.partial = lines.pop()
    return lines
