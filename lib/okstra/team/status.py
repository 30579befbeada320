"""The team table for people and scripts (DESIGN §6), and the evidence behind each status.

Every row carries the recorded status and the liveness verdict of
`liveness.assess` next to it: no status is shown without the evidence that
produced it (`explain` lists that evidence for one worker: startedAt, heartbeat
age, pid alive or not, exit code, result size and time, recorded reason).
Nothing is read from a screen.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from okstra.core.clock import parse_iso
from okstra.model.dispatch import BREAKER_OPEN, Dispatch
from okstra.model.layout import Run
from okstra.model.team_state import TeamState
from okstra.team import liveness


@dataclass(frozen=True)
class Row:
    dispatch: Dispatch
    health: liveness.Health
    age: float | None

    def tokens(self) -> str:
        u = self.dispatch.usage
        if u is None or (u.input_tokens is None and u.output_tokens is None):
            return "-"
        cached = f" ({u.cached_tokens} cached)" if u.cached_tokens else ""
        return f"{u.input_tokens or 0} in / {u.output_tokens or 0} out{cached}"

    def model(self) -> str:
        """provider/model, and plainly the model that served when the CLI says it was another."""
        d = self.dispatch
        served = f" (SERVED BY {d.served_model})" if d.model_mismatch else ""
        return f"{d.provider}/{d.model_id}{served}"

    def denials(self) -> str:
        found = self.dispatch.denials
        if not found:
            return "none"
        return f"{len(found)}: " + ", ".join(f"{x.get('tool')} {x.get('target') or ''}".strip() for x in found)

    def to_dict(self) -> dict[str, Any]:
        d = self.dispatch
        return {
            "workerId": d.worker_id,
            "role": d.role,
            "provider": d.provider,
            "modelId": d.model_id,
            "servedModel": d.served_model,
            "modelMismatch": d.model_mismatch,
            "denials": [dict(x) for x in d.denials],
            "status": d.status,
            "attempt": d.attempt,
            "paneId": d.pane_id,
            "ageSeconds": None if self.age is None else round(self.age, 1),
            "usage": d.usage.to_dict() if d.usage else None,
            "failoverFrom": d.failover_from.to_dict() if d.failover_from else None,
            "health": self.health.to_dict(),
        }


def age_of(d: Dispatch, now: float) -> float | None:
    """Running: since startedAt (or dispatchedAt); finished: how long it ran."""
    start = parse_iso(d.started_at) or parse_iso(d.dispatched_at)
    if start is None:
        return None
    end = parse_iso(d.finished_at) if d.terminal else None
    return (end if end is not None else now) - start


def table(
    run: Run,
    state: TeamState,
    *,
    all_attempts: bool = False,
    max_idle: float = liveness.DEFAULT_MAX_IDLE,
    launch_grace: float = liveness.DEFAULT_LAUNCH_GRACE,
    idle_window: float = liveness.DEFAULT_IDLE_WINDOW,
    now: float | None = None,
) -> list[Row]:
    """One row per dispatch of `state` (the caller loaded it once), judged against `run`'s files."""
    now = time.time() if now is None else now
    chosen = state.dispatches if all_attempts else state.latest()
    return [Row(d, liveness.assess(d, run.layout, now, max_idle, launch_grace, idle_window), age_of(d, now)) for d in chosen]


def failover_lines(state: TeamState) -> list[str]:
    """Who stands in for whom, every attempt, and the providers failover skips (README "Scope and spend")."""
    lines = [f"failover: {d.stand_in_text()}" for d in state.dispatches if d.failover_from]
    breakers = state.open_breakers()
    return [*lines, f"failover: {BREAKER_OPEN}: {', '.join(breakers)}"] if breakers else lines


def failover_doc(state: TeamState) -> dict[str, Any]:
    """The same, for --json: the stand-ins as team-dispatch --failover --json gives them."""
    return {
        "standIns": [d.stand_in_dict() for d in state.dispatches if d.failover_from],
        "breakerOpen": state.open_breakers(),
    }


def _age_text(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m"


def render(rows: list[Row]) -> str:
    head = ("WORKER", "ROLE", "PROVIDER/MODEL", "STATUS", "ATTEMPT", "AGE", "TOKENS", "EVIDENCE")
    body = [
        (
            r.dispatch.worker_id,
            r.dispatch.role,
            r.model(),
            r.dispatch.status,
            str(r.dispatch.attempt),
            _age_text(r.age),
            r.tokens(),
            ("" if r.health.healthy else "UNHEALTHY: ") + r.health.reason,
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head) - 1)]
    lines = ["  ".join([*(c.ljust(w) for c, w in zip(row[:-1], widths, strict=True)), row[-1]]) for row in [head, *body]]
    return "\n".join(lines)


def explain(row: Row) -> str:
    h, d = row.health, row.dispatch

    def show(value: Any, unit: str = "") -> str:
        return "-" if value is None else f"{value}{unit}"

    alive = {True: "alive", False: "not running", None: "-"}[h.pid_alive]
    pid = f"{d.pid} ({alive}{', start time ' + d.pid_start_time if d.pid_start_time else ''})" if d.pid else "-"
    lines = [
        ("worker", f"{d.worker_id} (attempt {d.attempt}, {d.role}, {d.provider}/{d.model_id})"),
        ("served model", (d.served_model or "- (the CLI does not say)") + (" (NOT the asked model)" if d.model_mismatch else "")),
        ("status", f"{d.status} (recorded)"),
        ("verdict", ("healthy" if h.healthy else "unhealthy") + f": {h.reason}"),
        ("dispatchedAt", show(d.dispatched_at)),
        ("startedAt", show(d.started_at)),
        ("finishedAt", show(d.finished_at)),
        ("clock", f"{h.clock} ({show(h.seconds_since_clock, ' s')} ago)" if h.clock else "-"),
        ("liveness", f"{d.liveness_mode}: {show(h.liveness_artifact)}"),
        ("heartbeat age", show(h.heartbeat_age, " s")),
        ("pid", pid),
        ("pane", show(d.pane_id)),
        ("exit code", show(d.exit_code)),
        (
            "result",
            f"{show(d.result_path)}: " + (f"{h.result_size} bytes, {h.result_mtime}" if h.result_size is not None else "absent"),
        ),
        ("reason", show(d.reason)),
        ("stands in for", f"{f.worker_id} attempt {f.attempt} ({f.provider}): {f.reason}" if (f := d.failover_from) else "-"),
        ("last event", f"{h.last_event} at {h.last_activity_at}" if h.last_event else "-"),
        ("denied writes", row.denials()),
        ("answer", show(d.answer_path)),
        ("tokens", row.tokens()),
    ]
    width = max(len(k) for k, _ in lines)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in lines)
