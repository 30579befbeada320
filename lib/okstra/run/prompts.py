"""Worker prompts: rendering from `templates/prompts/` and the contract (DESIGN §4).

Every prompt starts with five header lines the runtime checks before launch:

    **Task Type:** <task type>
    **Model:** <display name>, <model id>
    **Prompt Delivery Mode:** <how the CLI receives the prompt>
    **Forbidden Actions:** <the phase boundary>
    **Evidence Ledger:** <where evidence goes>

`check()` compares a prompt with the dispatch it is for and returns every
problem at once, one line each (a prompt naming a model the CLI will not run
would otherwise fail only after launch, looking like a worker fault).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra.core import home, memo
from okstra.core.errors import OkstraError
from okstra.model import roles
from okstra.model.catalog import PROMPT_DELIVERIES, Catalog
from okstra.model.dispatch import Dispatch
from okstra.model.layout import Run
from okstra.model.run_manifest import RunManifest

TEMPLATE_DIR = home.ROOT / "templates" / "prompts"
HEADERS = ("Task Type", "Model", "Prompt Delivery Mode", "Forbidden Actions", "Evidence Ledger")

_READ_ONLY = (
    "editing, creating or deleting any project file (write only your result file and your evidence folder); "
    "git commit, push, rebase, reset or checkout; installing packages; changing okstra state under .okstra/"
)
_IMPLEMENTER = (
    "editing files the approved plan does not name{stage}; git commit, push, rebase, reset or checkout; "
    "installing packages the plan does not name; changing okstra state under .okstra/ "
    "other than your result file and evidence folder"
)


def forbidden_actions(role: str, stage: int | None) -> str:
    if roles.write_scope(role) == roles.SCOPE_STAGE:
        return _IMPLEMENTER.format(stage=f" for stage {stage}" if stage is not None else "")
    return _READ_ONLY


def _environment() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        bytecode_cache=memo.template_cache(),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=False,
    )


def render(manifest: RunManifest, dispatch: Dispatch, catalog: Catalog, *, brief: str, run_layout: Any) -> str:
    """The prompt text of `dispatch`: `templates/prompts/<role>.md.j2` for a role with its
    own template (the report writer), else `templates/prompts/<task type>.md.j2`."""
    provider = catalog.provider(dispatch.provider)
    model = provider.model(dispatch.model_id)
    role = roles.BY_NAME.get(dispatch.role)
    context = {
        "task_type": manifest.task_type,
        "task_key": manifest.task_key,
        "run_id": manifest.run_id,
        "run_dir": manifest.run_dir,
        "stage": manifest.stage,
        "report_language": manifest.report_language,
        "worker_id": dispatch.worker_id,
        "role": dispatch.role,
        "role_title": role.title if role else dispatch.role.title(),
        "provider_display": provider.display,
        "model_display": model.display,
        "model_id": model.id,
        "prompt_delivery": provider.prompt_delivery,
        "forbidden_actions": forbidden_actions(dispatch.role, manifest.stage),
        "evidence_dir": run_layout.relative(run_layout.evidence_dir(dispatch.worker_id)),
        "result_path": dispatch.result_path,
        "brief": brief,
    }
    name = f"{dispatch.role}.md.j2" if role and role.own_template else f"{manifest.task_type}.md.j2"
    return _environment().get_template(name).render(**context)


def _headers(text: str) -> dict[str, list[tuple[int, str]]]:
    found: dict[str, list[tuple[int, str]]] = {h: [] for h in HEADERS}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        for header in HEADERS:
            marker = f"**{header}:**"
            if stripped.startswith(marker):
                found[header].append((number, stripped.removeprefix(marker).strip()))
    return found


def check(prompt_text: str, manifest: RunManifest, dispatch: Dispatch, catalog: Catalog) -> list[str]:
    """Every way `prompt_text` breaks the contract for `dispatch`, one line each ([] when clean)."""
    problems: list[str] = []
    found = _headers(prompt_text)
    values: dict[str, str] = {}
    for header, hits in found.items():
        if not hits:
            problems.append(f"missing header **{header}:**")
        elif len(hits) > 1:
            lines = ", ".join(str(n) for n, _ in hits)
            problems.append(f"header **{header}:** appears {len(hits)} times (lines {lines}); keep exactly one")
        else:
            values[header] = hits[0][1]

    label = None
    try:
        provider = catalog.provider(dispatch.provider)
        model = provider.model(dispatch.model_id)
        label = model.display
        delivery = provider.prompt_delivery
    except OkstraError as exc:
        problems.append(f"dispatch {dispatch.worker_id}: {exc}")
        delivery = None

    if "Task Type" in values and values["Task Type"] != manifest.task_type:
        problems.append(f"**Task Type:** is {values['Task Type']!r}, expected {manifest.task_type!r} (the run's task type)")
    if "Model" in values:
        text = values["Model"]
        expected = f"{label}, {dispatch.model_id}" if label else dispatch.model_id
        if ", " not in text:
            problems.append(f"**Model:** {text!r} is not '<label>, <model-id>'; expected {expected!r}")
        else:
            given_label, given_id = (part.strip() for part in text.rsplit(", ", 1))
            if given_id != dispatch.model_id:
                problems.append(
                    f"**Model:** names model {given_id!r}, but worker {dispatch.worker_id} runs {dispatch.model_id!r}; expected {expected!r}"
                )
            elif label is not None and given_label != label:
                problems.append(
                    f"**Model:** label {given_label!r} is not the display name of {dispatch.model_id}; expected {expected!r}"
                )
    if "Prompt Delivery Mode" in values:
        mode = values["Prompt Delivery Mode"]
        if mode not in PROMPT_DELIVERIES:
            problems.append(f"**Prompt Delivery Mode:** {mode!r} is not one of {', '.join(PROMPT_DELIVERIES)}")
        elif delivery is not None and mode != delivery:
            problems.append(f"**Prompt Delivery Mode:** is {mode!r}, but {dispatch.provider} takes its prompt as {delivery!r}")
    for header in ("Forbidden Actions", "Evidence Ledger"):
        if header in values and not values[header]:
            problems.append(f"header **{header}:** is empty")
    if not any(a.worker_id == dispatch.worker_id for a in manifest.assignments):
        problems.append(f"worker {dispatch.worker_id!r} is not in run {manifest.run_id}")
    return problems


class Contract:
    """`check` bound to one run, for team-dispatch, with the catalog it judges by (loaded once,
    on first use; the spend estimate reads the same one)."""

    def __init__(self, project_root: Path, manifest: RunManifest) -> None:
        self.project_root = project_root
        self.manifest = manifest

    @functools.cached_property
    def catalog(self) -> Catalog:
        from okstra.run import catalog as catalog_loader

        return catalog_loader.load(self.project_root)

    def __call__(self, text: str, dispatch: Dispatch) -> list[str]:
        return check(text, self.manifest, dispatch, self.catalog)


def checker(project_root: Path, manifest: RunManifest) -> Contract:
    return Contract(project_root, manifest)


@dataclass(frozen=True)
class FileCheck:
    prompt: Path
    problems: list[str]


def check_file(run: Run, prompt: str, worker_id: str) -> FileCheck:
    """`check()` for a prompt file named on a command line (resolved inside the project)."""
    from okstra.core import fsio, paths, schemas
    from okstra.run import catalog as catalog_loader

    # prompt-check is the contract's judge: it also holds the manifest to its schema.
    schemas.check_state("run-manifest", fsio.read_json(run.manifest_path, what="run manifest"), str(run.manifest_path))
    prompt_path = paths.argument(run.root, prompt, source="PROMPT")
    dispatch = run.state().find(worker_id)
    text = fsio.read_text(prompt_path, what="prompt")
    return FileCheck(prompt_path, check(text, run.manifest, dispatch, catalog_loader.load(run.root)))
