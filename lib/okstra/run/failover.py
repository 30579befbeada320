"""Failover (`team-dispatch --failover`): a rate-limited worker's role goes to the next provider.

When a worker's newest attempt ended `rate-limited` (`model.dispatch.is_rate_limited`),
its role is re-dispatched to the next provider of the role's fallback list
(`failover:` in config, e.g. `analyst: [claude, codex, antigravity]`) as a new
pending attempt with its own prompt, rendered for the provider it will run on
(so the prompt contract holds), and recorded with `failoverFrom` (the attempt it
stands in for and that attempt's reason). A provider that hit a limit in this run
is skipped for the rest of it (the breaker is open): `TeamState.open_breakers()`
reads that from the team state, the one record of what happened.

The stand-in runs as the next attempt of the run's worker on that provider when
that worker carries the provider's model and has nothing running; otherwise as a
new worker `<provider>-<role>`, added to the manifest (assignment, participant,
role execution) so the report names who stood in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from okstra.core import fsio, paths, schemas
from okstra.core.errors import RefusedError
from okstra.model import team_state
from okstra.model.catalog import Catalog
from okstra.model.dispatch import Dispatch, FailoverFrom, is_rate_limited
from okstra.model.layout import RunLayout, new_attempt
from okstra.model.run_manifest import Assignment, Participant, RoleExecution, RunManifest
from okstra.model.team_state import TeamState
from okstra.run import prompts

_HEADERS = tuple(f"**{h}:**" for h in prompts.HEADERS)


@dataclass(frozen=True)
class StandIn:
    dispatch: Dispatch
    replaces: Dispatch

    def to_dict(self) -> dict[str, Any]:
        return self.dispatch.stand_in_dict()


@dataclass(frozen=True)
class FailoverPlan:
    stand_ins: tuple[StandIn, ...]
    skipped: tuple[str, ...]  # one line per limited worker left without a stand-in, saying why
    breakers: tuple[str, ...]


def _limited(state: TeamState) -> list[Dispatch]:
    """Newest attempts that ended rate-limited and nobody stands in for yet."""
    covered = {(d.failover_from.worker_id, d.failover_from.attempt) for d in state.dispatches if d.failover_from}
    return [d for d in state.latest() if d.terminal and is_rate_limited(d.reason) and d.key not in covered]


def _stand_in_brief(previous: Dispatch, old_prompt: str) -> str:
    """The failed attempt's task, without its header lines (the stand-in has its own)."""
    body = "\n".join(line for line in old_prompt.splitlines() if not line.strip().startswith(_HEADERS)).strip()
    return (
        f"You stand in for worker `{previous.worker_id}` ({previous.provider}), which stopped on a rate limit "
        f"({previous.reason}). Its prompt follows; do its task, writing to **your** result file and evidence "
        f"folder named above, not to the ones named below.\n\n---\n\n{body}"
    )


def plan(
    layout: RunLayout,
    manifest: RunManifest,
    catalog: Catalog,
    fallback: Mapping[str, Sequence[str]],
) -> FailoverPlan:
    """Decide the stand-ins and write them (prompts, team state, manifest); nothing is launched."""
    state = team_state.load(layout.team_state)
    breakers = state.open_breakers()
    stand_ins: list[StandIn] = []
    skipped: list[str] = []
    manifest_now = manifest
    planned: list[Dispatch] = []
    for previous in _limited(state):
        choice, why_not = _next_provider(previous, fallback, breakers)
        if choice is None:
            skipped.append(why_not)
            continue
        provider = catalog.provider(choice)
        new, manifest_now = _new_dispatch(layout, manifest_now, state, planned, previous, provider.id, catalog)
        planned.append(new)
        stand_ins.append(StandIn(new, previous))
    if not stand_ins:
        return FailoverPlan((), tuple(skipped), tuple(breakers))

    texts = _stand_in_prompts(layout, manifest_now, catalog, stand_ins)
    if manifest_now is not manifest:
        schemas.check_state("run-manifest", manifest_now.to_dict(), str(layout.manifest))

    def add(current: TeamState) -> TeamState:
        # Under the team-state lock, and only once no clash refuses: the stand-ins' prompts
        # and the manifest's new assignments, then the team state. A refused or racing
        # failover writes nothing; a second one sees the first's attempts and refuses.
        known = {d.key for d in current.dispatches}
        clash = [s.dispatch.worker_id for s in stand_ins if s.dispatch.key in known]
        if clash:
            raise RefusedError(f"--failover: {', '.join(clash)} changed meanwhile", hint="run team-dispatch --failover again")
        for s in stand_ins:
            fsio.atomic_write(layout.prompt_path(s.dispatch.worker_id, s.dispatch.attempt), texts[s.dispatch.key])
        if manifest_now is not manifest:
            fsio.write_json(layout.manifest, manifest_now.to_dict())
        return TeamState(current.run_id, current.dispatches + tuple(s.dispatch for s in stand_ins))

    team_state.update(layout.team_state, add)
    return FailoverPlan(tuple(stand_ins), tuple(skipped), tuple(breakers))


def _next_provider(previous: Dispatch, fallback: Mapping[str, Sequence[str]], breakers: list[str]) -> tuple[str | None, str]:
    """The provider to stand in for `previous`: the next one after it in its role's fallback
    list whose breaker is closed; else None and the line saying why there is none."""
    order = list(fallback.get(previous.role) or ())
    if not order:
        return None, f"{previous.worker_id}: no failover list for the {previous.role} role (failover.{previous.role} in config)"
    after = order[order.index(previous.provider) + 1 :] if previous.provider in order else order
    choices = [p for p in after if p not in breakers and p != previous.provider]
    if not choices:
        return None, (
            f"{previous.worker_id}: no provider left for {previous.role} after {previous.provider} "
            f"(list {', '.join(order)}; breaker open for {', '.join(breakers)})"
        )
    return choices[0], ""


def _stand_in_prompts(
    layout: RunLayout, manifest: RunManifest, catalog: Catalog, stand_ins: list[StandIn]
) -> dict[tuple[str, int], str]:
    """Each stand-in's prompt, rendered for its own provider around the task of the attempt it
    replaces (read from that attempt's recorded prompt); nothing is written here."""
    texts = {}
    for s in stand_ins:
        where = paths.resolve_inside(
            layout.project_root, s.replaces.prompt_path or "", source=f"{s.replaces.worker_id} promptPath"
        )
        old_prompt = fsio.read_text(where, what="prompt file")
        brief = _stand_in_brief(s.replaces, old_prompt)
        texts[s.dispatch.key] = prompts.render(manifest, s.dispatch, catalog, brief=brief, run_layout=layout)
    return texts


def _new_dispatch(
    layout: RunLayout,
    manifest: RunManifest,
    state: TeamState,
    planned: list[Dispatch],
    previous: Dispatch,
    provider_id: str,
    catalog: Catalog,
) -> tuple[Dispatch, RunManifest]:
    provider = catalog.provider(provider_id)
    busy = {d.worker_id for d in planned}
    same = [a for a in manifest.assignments if a.provider == provider_id and a.worker_id not in busy]
    worker_id, model_id, attempt = None, provider.default_model, 1
    for a in same:
        newest = state.find(a.worker_id)
        if newest.terminal:
            worker_id, model_id, attempt = a.worker_id, a.model_id, newest.attempt + 1
            break
    if worker_id is None:
        taken = {a.worker_id for a in manifest.assignments} | busy
        base = f"{provider_id}-{previous.role}"
        worker_id = base if base not in taken else next(f"{base}-{n}" for n in range(2, 100) if f"{base}-{n}" not in taken)
    model = provider.model(model_id)
    known = {a.worker_id for a in manifest.assignments}
    if worker_id not in known:
        manifest = manifest.evolve(
            assignments=(
                *manifest.assignments,
                Assignment(worker_id, provider_id, model_id, model.cli_model, provider.runner, (previous.role,)),
            ),
        )
    if not any(p.worker_id == worker_id and p.role == previous.role for p in manifest.participants):
        manifest = manifest.evolve(
            participants=(
                *manifest.participants,
                Participant(worker_id, previous.role, provider_id, provider.display, model_id, model.display),
            ),
            role_executions=(
                *manifest.role_executions,
                RoleExecution(previous.role, worker_id, provider_id, model_id, provider.runner),
            ),
        )
    new = new_attempt(
        layout, worker_id=worker_id, role=previous.role, provider=provider_id, model_id=model_id, attempt=attempt
    ).evolve(failover_from=FailoverFrom(previous.worker_id, previous.attempt, previous.provider, previous.reason or ""))
    return new, manifest
