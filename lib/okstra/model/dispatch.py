"""A worker dispatch record (DESIGN §2) and the one set of statuses.

`TERMINAL_STATUSES` is defined here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from okstra.core.errors import StateError

PENDING = "pending"
IN_PROGRESS = "in-progress"
COMPLETED = "completed"
TIMEOUT = "timeout"
ERROR = "error"
NOT_RUN = "not-run"

STATUSES = (PENDING, IN_PROGRESS, COMPLETED, TIMEOUT, ERROR, NOT_RUN)
TERMINAL_STATUSES = frozenset({COMPLETED, TIMEOUT, ERROR, NOT_RUN})

TORN_DOWN_REASON = "torn down before reaching a terminal status"

# The reason class of a provider's rate, usage or quota limit (DESIGN §5). A reason of
# this class reads "rate-limited: <the provider's own text>[; retry after <what it said>]";
# failover keys on the class, people read the text. Defined here and nowhere else.
RATE_LIMITED = "rate-limited"

# How team-dispatch --failover and team-status name the providers failover skips (README "Scope and spend").
BREAKER_OPEN = "breaker open (skipped for the rest of the run)"


def rate_limited_reason(provider_text: str | None, retry_after: str | None = None) -> str:
    """A `rate-limited` reason keeping the provider's text and any retry-after it stated."""
    reason = RATE_LIMITED + (f": {provider_text}" if provider_text else "")
    return reason + (f"; retry after {retry_after}" if retry_after else "")


def is_rate_limited(reason: str | None) -> bool:
    """True when a recorded reason is of the `rate-limited` class: any reason `rate_limited_reason`
    writes, including one with a retry-after and no provider text (`rate-limited; retry after …`)."""
    return bool(reason) and (reason == RATE_LIMITED or str(reason).startswith((RATE_LIMITED + ":", RATE_LIMITED + ";")))


def is_terminal(status: str) -> bool:
    return status in TERMINAL_STATUSES


@dataclass(frozen=True)
class Usage:
    """Token usage as the provider reported it; None where it reports nothing."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "cachedTokens": self.cached_tokens,
            "costUsd": self.cost_usd,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Usage:
        return cls(
            input_tokens=raw.get("inputTokens"),
            output_tokens=raw.get("outputTokens"),
            cached_tokens=raw.get("cachedTokens"),
            cost_usd=raw.get("costUsd"),
        )


@dataclass(frozen=True)
class ScopeCheck:
    """stage-check's verdict on what one worker changed, recorded when its run ended (DESIGN §10)."""

    verdict: str  # "in-scope" | "out-of-scope" | "not-checked"
    out_of_scope: tuple[str, ...] = ()
    record: str | None = None  # project-relative scope record (every path the worker wrote)
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "outOfScope": list(self.out_of_scope), "record": self.record, "note": self.note}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> ScopeCheck:
        return cls(str(raw.get("verdict")), tuple(raw.get("outOfScope") or ()), raw.get("record"), raw.get("note"))


@dataclass(frozen=True)
class Estimate:
    """The spend estimate of one dispatch before it ran: input tokens from its prompt, cost from prices."""

    input_tokens: int
    cost_usd: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"inputTokens": self.input_tokens, "costUsd": self.cost_usd}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Estimate:
        return cls(int(raw.get("inputTokens") or 0), raw.get("costUsd"))


@dataclass(frozen=True)
class FailoverFrom:
    """The attempt a failover dispatch stands in for, and why it ended."""

    worker_id: str
    attempt: int
    provider: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"workerId": self.worker_id, "attempt": self.attempt, "provider": self.provider, "reason": self.reason}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> FailoverFrom:
        return cls(str(raw.get("workerId")), int(raw.get("attempt") or 1), str(raw.get("provider")), str(raw.get("reason")))


# Optional records: stored only when set, so documents without them stay as they were.
_OPTIONAL = {
    "scopeCheck": ("scope_check", ScopeCheck),
    "estimate": ("estimate", Estimate),
    "failoverFrom": ("failover_from", FailoverFrom),
}

# Record field name (camelCase, as stored) -> attribute name.
_FIELDS = {
    "workerId": "worker_id",
    "role": "role",
    "provider": "provider",
    "modelId": "model_id",
    "status": "status",
    "attempt": "attempt",
    "round": "round",
    "paneId": "pane_id",
    "promptPath": "prompt_path",
    "resultPath": "result_path",
    "logPath": "log_path",
    "livenessMode": "liveness_mode",
    "livenessArtifact": "liveness_artifact",
    "pid": "pid",
    "pgid": "pgid",
    "pidStartTime": "pid_start_time",
    "childPid": "child_pid",
    "childStartTime": "child_start_time",
    "dispatchedAt": "dispatched_at",
    "startedAt": "started_at",
    "finishedAt": "finished_at",
    "exitCode": "exit_code",
    "reason": "reason",
    "cliModel": "cli_model",
    "servedModel": "served_model",
    "answerPath": "answer_path",
    "lastActivityAt": "last_activity_at",
    "lastEvent": "last_event",
}


@dataclass(frozen=True)
class Dispatch:
    worker_id: str
    role: str
    provider: str
    model_id: str
    status: str = PENDING
    attempt: int = 1
    round: str | None = None
    pane_id: str | None = None
    prompt_path: str | None = None
    result_path: str | None = None
    log_path: str | None = None
    liveness_mode: str = "heartbeat"
    liveness_artifact: str | None = None
    pid: int | None = None
    pgid: int | None = None
    pid_start_time: str | None = None
    # The provider CLI runs in its own process group: recorded so teardown can stop
    # it even when worker-run itself was SIGKILLed and the child was orphaned.
    child_pid: int | None = None
    child_start_time: str | None = None
    dispatched_at: str | None = None  # when a backend launched it (the clock of a pending dispatch's grace)
    started_at: str | None = None
    finished_at: str | None = None
    exit_code: int | None = None
    reason: str | None = None
    usage: Usage | None = field(default=None)
    scope_check: ScopeCheck | None = None
    estimate: Estimate | None = None
    failover_from: FailoverFrom | None = None
    # What the provider CLI itself said (docs/DESIGN.md §5): the model value passed to its
    # model flag, the model its output says served, where its final message went, when it
    # last printed an event and what that was ("tool: Write …", "retry: …"), and the tool
    # calls it was denied ({"tool", "target"} each).
    cli_model: str | None = None
    served_model: str | None = None
    answer_path: str | None = None
    last_activity_at: str | None = None
    last_event: str | None = None
    denials: tuple[Mapping[str, Any], ...] = ()

    @property
    def terminal(self) -> bool:
        return is_terminal(self.status)

    @property
    def model_mismatch(self) -> bool:
        """The CLI says another model served than the one it was asked for (a context suffix like [1m] aside)."""
        if not self.served_model:
            return False
        served = self.served_model.split("[", 1)[0]
        return served not in {self.cli_model or self.model_id, self.model_id}

    @property
    def key(self) -> tuple[str, int]:
        return (self.worker_id, self.attempt)

    def stand_in_text(self) -> str | None:
        """A failover stand-in as team-dispatch --failover and team-status say it; None for any other dispatch."""
        f = self.failover_from
        if f is None:
            return None
        return (
            f"{self.worker_id} attempt {self.attempt} ({self.provider}/{self.model_id}) "
            f"stands in for {f.worker_id} attempt {f.attempt} ({f.provider}) as {self.role}: {f.reason}"
        )

    def stand_in_dict(self) -> dict[str, Any]:
        """A failover stand-in as team-dispatch --json and team-status --json give it."""
        return {
            "workerId": self.worker_id,
            "attempt": self.attempt,
            "provider": self.provider,
            "modelId": self.model_id,
            "role": self.role,
            "standsInFor": self.failover_from.to_dict() if self.failover_from else None,
        }

    def evolve(self, **changes: Any) -> Dispatch:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, attr) for name, attr in _FIELDS.items()}  # every one a plain value
        out["usage"] = self.usage.to_dict() if self.usage else None
        for name, (attr, _) in _OPTIONAL.items():
            if getattr(self, attr) is not None:
                out[name] = getattr(self, attr).to_dict()
        out["denials"] = [dict(d) for d in self.denials]
        return out

    @classmethod
    def from_dict(cls, raw: Any, source: str = "team state") -> Dispatch:
        if not isinstance(raw, Mapping):
            raise StateError(f"{source}: a dispatch record is not an object")
        missing = [k for k in ("workerId", "role", "provider", "modelId", "status") if not raw.get(k)]
        if missing:
            raise StateError(f"{source}: dispatch record lacks {', '.join(missing)}")
        if raw["status"] not in STATUSES:
            raise StateError(
                f"{source}: dispatch {raw['workerId']!r} has status {raw['status']!r}",
                hint=f"expected one of {', '.join(STATUSES)}",
            )
        kwargs = {attr: raw[name] for name, attr in _FIELDS.items() if raw.get(name) is not None}
        usage = raw.get("usage")
        for name, (attr, kind) in _OPTIONAL.items():
            if isinstance(raw.get(name), Mapping):
                kwargs[attr] = kind.from_dict(raw[name])
        denials = tuple(dict(d) for d in raw.get("denials") or () if isinstance(d, Mapping))
        return cls(**kwargs, usage=Usage.from_dict(usage) if isinstance(usage, Mapping) else None, denials=denials)
