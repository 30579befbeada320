"""Role planning and roster rules (DESIGN §3): who plays which role on which model.

Sources, highest first, for each setting:

- roster     `--workers P,P`, then `default-workers` (env OKSTRA_DEFAULT_WORKERS,
             project config, global config), then the built-in `claude,codex`;
             an executor the user names joins the built-in roster (as the
             original tool did); a roster the user named must hold it;
- executor   `--executor P`, then `default-executor` (same chain), then
             `claude` when it is in the roster, else the first roster worker;
- models     `--role-model ROLE=PROVIDER/MODEL` (repeatable), else the provider's
             default model;
- language   `--report-language`, then `report-language` (same chain), else none.

(The environment overrides the config files, as `okstra config get` shows: DESIGN §11.)

A worker id is a provider id and carries exactly one model. The roles each
task type dispatches as workers:

  analysis                 analyst on every roster worker; report-writer on the first
  implementation-planning  planner on every roster worker; report-writer on the first
  implementation           implementer on the executor; verifier on every other roster
                           worker (on the executor itself when it is alone); report-writer
                           on the first verifier
  verification             verifier on every roster worker; report-writer on the first
  release-handoff          critic on every roster worker; report-writer on the first

`--role-model` pins a role to a provider and model: for analyst, planner,
verifier and critic it pins (or adds) that provider's holder of the role; for
implementer it names the executor; for report-writer it moves the role. A
provider outside the roster gets its own worker id (its provider id) and its
own dispatches: a first-round role is dispatched with the roster, a later
role (report-writer, translator, ...) by its round. The lead (`leader`, default
`claude` on its default model, runner native-session) and the translator
(only when a report language is set; default: the report-writer's worker)
are resolved outside the roster, and each gets a role execution and a
participant entry like any worker.

Each worker's first-round role (the first of analyst, planner, implementer,
verifier, critic in that order, else its first role) is what render-bundle
dispatches; report-writer, translator and second-round roles are recorded in
the role executions for the rounds that follow.

Roles placed by okstra's defaults follow their worker's model; roles the user
placed (`--executor`, `default-executor`, `--role-model`) carry a model of
their own, and two such roles on one worker with two models are refused, as
are an executor outside the roster and unknown providers or models. Every
refusal happens before anything is written and says what to pass instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from okstra.core.errors import InputError, RefusedError
from okstra.model.catalog import Catalog, Provider
from okstra.model.roles import BY_NAME, LEADER, LEADER_ID, PIN_SINGLE, ROLES, TASK_ROLES, TRANSLATOR
from okstra.model.run_manifest import TASK_TYPES, Assignment, Participant, RoleExecution
from okstra.run import config

BUILTIN_WORKERS = ("claude", "codex")
LEADER_PROVIDER = "claude"
_ROLE_MODEL = re.compile(r"^(?P<role>[a-z-]+)=(?P<provider>[^/\s]+)/(?P<model>\S(?:.*\S)?)$")


@dataclass(frozen=True)
class RoleModel:
    role: str
    provider: str
    model: str
    text: str  # as given, for messages

    @classmethod
    def parse(cls, text: str) -> RoleModel:
        m = _ROLE_MODEL.match(text.strip())
        if not m:
            raise InputError(
                f"--role-model {text!r} is not ROLE=PROVIDER/MODEL",
                hint="e.g. --role-model verifier=codex/gpt-5",
            )
        role = m["role"]
        if role not in ROLES:
            raise InputError(f"--role-model {text!r}: unknown role {role!r}", hint=f"known roles: {', '.join(ROLES)}")
        return cls(role, m["provider"], m["model"], text.strip())


@dataclass(frozen=True)
class PlanRequest:
    task_type: str
    workers: Sequence[str] | None = None
    executor: str | None = None
    role_models: Sequence[str] = ()
    report_language: str | None = None


@dataclass(frozen=True)
class RolePlacement:
    role: str
    worker_id: str
    provider: str
    model_id: str | None  # None: follows the worker's model
    source: str  # why it is there, for messages


@dataclass(frozen=True)
class RolePlan:
    task_type: str
    roster: tuple[str, ...]
    executor: str | None
    report_language: str | None
    participants: tuple[Participant, ...]
    role_executions: tuple[RoleExecution, ...]
    assignments: tuple[Assignment, ...]
    first_round: tuple[RoleExecution, ...] = field(default=())  # one per roster worker, dispatched now

    def execution(self, role: str) -> tuple[RoleExecution, ...]:
        return tuple(r for r in self.role_executions if r.role == role)


# --- sources ---------------------------------------------------------------


BUILTIN_ROSTER = "the built-in roster"


def _roster(request: PlanRequest, project_root: Path | None, catalog: Catalog) -> tuple[tuple[str, ...], str]:
    if request.workers is not None:
        raw, source = list(request.workers), "--workers"
    else:
        value = config.effective("default-workers", project_root)
        raw, source = (
            (value.value.split(","), f"default-workers ({value.source})") if value else (list(BUILTIN_WORKERS), BUILTIN_ROSTER)
        )
    roster = tuple(w.strip() for w in raw if w.strip())
    if not roster:
        raise InputError(f"{source}: the roster is empty", hint="name at least one provider, e.g. --workers claude,codex")
    seen: set[str] = set()
    for w in roster:
        if w in seen:
            raise InputError(f"{source}: {w!r} is named twice", hint="a worker id is a provider id and appears once")
        seen.add(w)
        _provider(catalog, w, source)
    return roster, source


def _provider(catalog: Catalog, provider_id: str, source: str) -> Provider:
    return catalog.provider(provider_id, source)


def _model(provider: Provider, model_id: str, source: str) -> str:
    if model_id in provider.model_ids():
        return model_id
    alias = [m.id for m in provider.models if model_id in (m.display, m.cli_model)]
    hint = f"use the model id {alias[0]!r}" if alias else f"known models of {provider.id}: {', '.join(provider.model_ids())}"
    raise RefusedError(f"{source}: provider {provider.id!r} has no model id {model_id!r}", hint=hint)


def _executor(
    request: PlanRequest,
    project_root: Path | None,
    roster: tuple[str, ...],
    roster_source: str,
    catalog: Catalog,
    pins: list[RoleModel],
) -> tuple[str, str, bool]:
    """(executor, source, placed_by_user)."""
    implementer_pins = [p for p in pins if p.role == "implementer"]
    if request.executor is not None:
        executor, source, explicit = request.executor.strip(), f"--executor {request.executor.strip()}", True
    elif implementer_pins:
        executor, source, explicit = implementer_pins[0].provider, f"--role-model {implementer_pins[0].text}", True
    else:
        value = config.effective("default-executor", project_root)
        if value is not None:
            executor, source, explicit = value.value, f"default-executor {value.value} ({value.source})", True
        else:
            return _default_executor(roster), "the default executor", False
    _provider(catalog, executor, source)
    for pin in implementer_pins:
        if pin.provider != executor:
            raise RefusedError(
                f"--role-model {pin.text} puts the implementer on {pin.provider}, but the executor is {executor} ({source})",
                hint=f"pass --executor {pin.provider} or --role-model implementer={executor}/MODEL",
            )
    if executor not in roster:
        other = "" if source.startswith("--executor") else f" or pass --executor {roster[0]}"
        raise RefusedError(
            f"{source}: the executor {executor!r} is not in the roster ({', '.join(roster)}, from {roster_source})",
            hint=f"add it with --workers {','.join((*roster, executor))}{other}",
        )
    return executor, source, explicit


def _default_executor(roster: tuple[str, ...]) -> str:
    return LEADER_PROVIDER if LEADER_PROVIDER in roster else roster[0]


def _join_builtin(roster: tuple[str, ...], roster_source: str, executor: str | None) -> tuple[str, ...]:
    """A named executor joins the built-in roster (never a roster the user named)."""
    if roster_source == BUILTIN_ROSTER and executor and executor not in roster:
        return (*roster, executor)
    return roster


def _language(request: PlanRequest, project_root: Path | None) -> str | None:
    if request.report_language is not None:
        return config.check_value("report-language", request.report_language, source="--report-language")
    value = config.effective("report-language", project_root)
    return value.value if value else None


# --- planning --------------------------------------------------------------


def _default_placements(
    task_type: str, roster: tuple[str, ...], executor: str, executor_source: str, executor_model: str | None
) -> list[RolePlacement]:
    """The roles okstra places by itself (documented in the module docstring)."""
    if task_type == "implementation":
        others = [w for w in roster if w != executor]
        verifiers = others or [executor]
        placed = [RolePlacement("implementer", executor, executor, executor_model, executor_source)]
        placed += [RolePlacement("verifier", w, w, None, "the implementation defaults") for w in verifiers]
        placed.append(RolePlacement("report-writer", verifiers[0], verifiers[0], None, "the implementation defaults"))
        return placed
    per_worker = {
        "analysis": "analyst",
        "implementation-planning": "planner",
        "verification": "verifier",
        "release-handoff": "critic",
    }[task_type]
    placed = [RolePlacement(per_worker, w, w, None, f"the {task_type} defaults") for w in roster]
    placed.append(RolePlacement("report-writer", roster[0], roster[0], None, f"the {task_type} defaults"))
    return placed


def _apply_pins(
    placed: list[RolePlacement], pins: list[RoleModel], catalog: Catalog
) -> tuple[list[RolePlacement], list[RolePlacement]]:
    """Worker placements with pins applied, and the leader/translator pins."""
    outside: list[RolePlacement] = []
    seen: set[tuple[str, str]] = set()
    for pin in pins:
        source = f"--role-model {pin.text}"
        provider = _provider(catalog, pin.provider, source)
        model_id = _model(provider, pin.model, source)
        key = (pin.role, "") if BY_NAME[pin.role].pin == PIN_SINGLE else (pin.role, pin.provider)
        if key in seen:
            raise InputError(f"{source}: role {pin.role} is pinned twice", hint="give each role (and provider) one --role-model")
        seen.add(key)
        if pin.role in (LEADER, TRANSLATOR):
            outside.append(
                RolePlacement(pin.role, LEADER_ID if pin.role == LEADER else pin.provider, pin.provider, model_id, source)
            )
            continue
        pinned = RolePlacement(pin.role, pin.provider, pin.provider, model_id, source)
        if BY_NAME[pin.role].pin == PIN_SINGLE:
            placed = [p for p in placed if p.role != pin.role] + [pinned]
        else:
            placed = [p for p in placed if (p.role, p.worker_id) != (pin.role, pin.provider)] + [pinned]
    return placed, outside


def _describe(p: RolePlacement, model_id: str) -> str:
    return f"{p.role} on {model_id} ({p.source})"


def _worker_models(placed: list[RolePlacement], catalog: Catalog) -> dict[str, str]:
    """The one model of each worker id; refuses a worker carrying two."""
    chosen: dict[str, tuple[str, RolePlacement]] = {}
    for p in placed:
        if p.model_id is None:
            continue
        model_id = p.model_id
        if p.worker_id in chosen and chosen[p.worker_id][0] != model_id:
            first_model, first = chosen[p.worker_id]
            raise RefusedError(
                f"worker {p.worker_id} would carry two models: {_describe(first, first_model)} and {_describe(p, model_id)}",
                hint=f"a worker id carries one model: pin both roles to one model "
                f"(e.g. --role-model {first.role}={p.provider}/{model_id} or --role-model {p.role}={p.provider}/{first_model}) "
                f"or move the {p.role} to another provider",
            )
        chosen.setdefault(p.worker_id, (model_id, p))
    out = {w: m for w, (m, _) in chosen.items()}
    for p in placed:
        out.setdefault(p.worker_id, catalog.provider(p.provider).default_model)
    return out


ORDER = {r: i for i, r in enumerate(ROLES)}  # the role table's order: rows, first rounds, assignments


def plan(request: PlanRequest, catalog: Catalog, project_root: Path | None = None) -> RolePlan:
    """Resolve every role to a worker, provider and model id, or refuse (nothing is written)."""
    if request.task_type not in TASK_TYPES:
        raise InputError(f"--task-type {request.task_type!r} is not a task type", hint=f"use one of {', '.join(TASK_TYPES)}")
    pins = _pins(request)
    roster, roster_source = _roster(request, project_root, catalog)
    if request.task_type == "implementation" or request.executor is not None:
        named = request.executor or next((p.provider for p in pins if p.role == "implementer"), None)
        if named is None and request.task_type == "implementation":
            value = config.effective("default-executor", project_root)
            named = value.value if value else None
        roster = _join_builtin(roster, roster_source, named.strip() if named else None)
        executor, executor_source, explicit = _executor(request, project_root, roster, roster_source, catalog, pins)
    else:
        executor, executor_source, explicit = _default_executor(roster), "the default executor", False
    language = _language(request, project_root)

    executor_model = catalog.provider(executor).default_model if explicit else None
    placed = _default_placements(request.task_type, roster, executor, executor_source, executor_model)
    placed, outside = _apply_pins(placed, pins, catalog)
    leader = _leader(outside, catalog)
    translator = _translator(placed, outside, language)
    if translator is not None:
        placed.append(translator)

    models = _worker_models(placed, catalog)
    placed.sort(key=lambda p: (ORDER[p.role], _rank(p.worker_id, roster)))
    models[LEADER_ID] = leader.model_id or catalog.provider(leader.provider).default_model
    participants, executions = _participants([leader, *placed], models, catalog)
    assignments, first_round = _assignments(request.task_type, roster, placed, executions, models, catalog)
    return RolePlan(
        task_type=request.task_type,
        roster=roster,
        executor=executor if request.task_type == "implementation" else None,
        report_language=language,
        participants=tuple(participants),
        role_executions=tuple(executions),
        assignments=tuple(assignments),
        first_round=tuple(first_round),
    )


def _pins(request: PlanRequest) -> list[RoleModel]:
    """--role-model pins, each for a role the task type has."""
    pins = [RoleModel.parse(text) for text in request.role_models]
    allowed = (*TASK_ROLES[request.task_type], "critic", "report-writer", "leader", "translator")
    for pin in pins:
        if pin.role not in allowed:
            raise InputError(
                f"--role-model {pin.text}: the {request.task_type} task type has no {pin.role} role",
                hint=f"roles of {request.task_type}: {', '.join(dict.fromkeys(allowed))}",
            )
    return pins


def _leader(outside: list[RolePlacement], catalog: Catalog) -> RolePlacement:
    """The lead: pinned with --role-model leader=…, else the built-in lead."""
    leader = next((p for p in outside if p.role == "leader"), None)
    if leader is not None:
        return leader
    lp = catalog.provider(LEADER_PROVIDER) if LEADER_PROVIDER in catalog.ids() else catalog.providers[0]
    return RolePlacement("leader", LEADER_ID, lp.id, lp.default_model, "the built-in lead")


def _translator(placed: list[RolePlacement], outside: list[RolePlacement], language: str | None) -> RolePlacement | None:
    """The translator a report language needs: pinned, else the report writer; none without a language."""
    translator = next((p for p in outside if p.role == "translator"), None)
    if language is None:
        if translator is not None:
            raise RefusedError(
                f"{translator.source}: a translator needs a report language",
                hint="pass --report-language LANG (e.g. ko) or set report-language with okstra config set",
            )
        return None
    if translator is None:
        writer = next(p for p in placed if p.role == "report-writer")
        translator = RolePlacement("translator", writer.worker_id, writer.provider, None, f"--report-language {language}")
    return translator


def _participants(
    all_placed: list[RolePlacement], models: dict[str, str], catalog: Catalog
) -> tuple[list[Participant], list[RoleExecution]]:
    participants, executions = [], []
    for p in all_placed:
        provider = catalog.provider(p.provider)
        model = provider.model(models[p.worker_id])
        runner = "native-session" if p.role == "leader" else provider.runner
        participants.append(Participant(p.worker_id, p.role, provider.id, provider.display, model.id, model.display))
        executions.append(RoleExecution(p.role, p.worker_id, provider.id, model.id, runner))
    return participants, executions


def _assignments(
    task_type: str,
    roster: tuple[str, ...],
    placed: list[RolePlacement],
    executions: list[RoleExecution],
    models: dict[str, str],
    catalog: Catalog,
) -> tuple[list[Assignment], list[RoleExecution]]:
    """One assignment per worker (all its roles), and the role each worker runs first: a
    roster worker, or one pinned outside the roster to a role of this task type."""
    assignments, first_round = [], []
    workers = [w for w in (*roster, *(p.worker_id for p in placed)) if any(q.worker_id == w for q in placed)]
    for worker_id in dict.fromkeys(workers):
        mine = [e for e in executions if e.worker_id == worker_id]
        provider = catalog.provider(mine[0].provider)
        model = provider.model(models[worker_id])
        roles = tuple(sorted({e.role for e in mine}, key=ORDER.__getitem__))
        assignments.append(Assignment(worker_id, provider.id, model.id, model.cli_model, provider.runner, roles))
        if worker_id in roster or any(e.role in TASK_ROLES[task_type] for e in mine):
            first_round.append(min(mine, key=lambda e: ORDER[e.role]))
    return assignments, first_round


def _rank(worker_id: str, roster: tuple[str, ...]) -> int:
    return roster.index(worker_id) if worker_id in roster else len(roster)
