"""Team state (DESIGN §2): every dispatch attempt of a run, changed only under lock."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra.core import fsio, seal
from okstra.core.errors import StateError
from okstra.model.dispatch import Dispatch, is_rate_limited

SCHEMA_VERSION = "1.0"
# What to do about a team state okstra did not write (DESIGN §14).
_SEAL_HINT = "okstra's own commands write it; undo the change (restore the file), or prepare the run again with render-bundle"


@dataclass(frozen=True)
class TeamState:
    run_id: str
    dispatches: tuple[Dispatch, ...]

    def latest(self) -> tuple[Dispatch, ...]:
        """The newest attempt of each worker, in roster order."""
        newest: dict[str, Dispatch] = {}
        for d in self.dispatches:
            if d.worker_id not in newest or d.attempt > newest[d.worker_id].attempt:
                newest[d.worker_id] = d
        return tuple(newest.values())

    def open_breakers(self) -> list[str]:
        """Providers that hit a rate limit in this run, in the order they did: failover skips them (README "Scope and spend")."""
        return list(dict.fromkeys(d.provider for d in self.dispatches if is_rate_limited(d.reason)))

    def find(self, worker_id: str, attempt: int | None = None) -> Dispatch:
        candidates = [d for d in self.dispatches if d.worker_id == worker_id]
        if attempt is not None:
            candidates = [d for d in candidates if d.attempt == attempt]
        if not candidates:
            known = ", ".join(sorted({d.worker_id for d in self.dispatches})) or "none"
            raise StateError(f"no dispatch for worker {worker_id!r} in run {self.run_id}", hint=f"known workers: {known}")
        return max(candidates, key=lambda d: d.attempt)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schemaVersion": SCHEMA_VERSION,
            "runId": self.run_id,
            "workerDispatches": [d.to_dict() for d in self.dispatches],
        }

    @classmethod
    def from_dict(cls, raw: Any, source: str = "team state") -> TeamState:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("workerDispatches"), list):
            raise StateError(f"{source}: not a team-state document (no workerDispatches list)")
        return cls(
            run_id=str(raw.get("runId", "")),
            dispatches=tuple(Dispatch.from_dict(d, source) for d in raw["workerDispatches"]),
        )


def _open(raw: Any, path: Path) -> TeamState:
    """The state a sealed document holds; refused when its seal is missing or differs (DESIGN §14)."""
    return TeamState.from_dict(seal.open_json(raw, str(path), _SEAL_HINT), str(path))


def load(path: Path) -> TeamState:
    return _open(fsio.read_json(path, what="team-state file"), path)


def document(state: TeamState) -> dict[str, Any]:
    """The file's content: `state` and its seal (DESIGN §14)."""
    return seal.seal_json(state.to_dict())


def write(path: Path, state: TeamState) -> None:
    """The one team-state writer: the document and its seal in one atomic write (DESIGN §14)."""
    fsio.write_json(path, document(state))


def update(path: Path, change: Callable[[TeamState], TeamState | None]) -> TeamState:
    """Apply `change` under the team-state lock; it returns the new state, or None for no change."""
    result: list[TeamState] = []

    def mutate(raw: Any) -> bool:
        current = _open(raw, path)
        new = change(current)
        result.append(new or current)
        if new is None or new == current:
            return False
        raw.clear()
        raw.update(document(new))
        return True

    fsio.update_json(path, mutate)
    return result[0]


def update_dispatch(path: Path, worker_id: str, attempt: int, change: Callable[[Dispatch], Dispatch]) -> Dispatch:
    """Replace one dispatch record under lock and return its new value."""

    def apply(state: TeamState) -> TeamState:
        old = state.find(worker_id, attempt)
        new = change(old)
        return TeamState(state.run_id, tuple(new if d.key == old.key else d for d in state.dispatches))

    return update(path, apply).find(worker_id, attempt)
