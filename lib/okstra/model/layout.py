"""Where every file of okstra's state lives under `<project>/.okstra/` (DESIGN §2).

This module is the one definition of the run layout; every other module asks
it for paths instead of joining strings itself.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra.core import fsio, names, paths
from okstra.core.errors import InputError, StateError
from okstra.core.names import DATA_SUFFIX, MARKDOWN_SUFFIX, OKSTRA_DIR, REPORTS_DIR, RESPONSES_DIR, RUNS_DIR
from okstra.model import active_run, roles, run_manifest, team_state
from okstra.model.dispatch import PENDING, Dispatch
from okstra.model.run_manifest import RunManifest

MANIFEST = "run-manifest.json"
_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_WORKER = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


@dataclass(frozen=True)
class TaskKey:
    group: str
    task_id: str

    def __str__(self) -> str:
        return f"{self.group}/{self.task_id}"

    @classmethod
    def parse(cls, text: str, source: str = "--task-key") -> TaskKey:
        parts = text.split("/")
        if len(parts) != 2 or not all(_SLUG.match(p) and ".." not in p for p in parts):
            raise InputError(
                f"{source}: {text!r} is not a task key",
                hint="use GROUP/ID in lower-case letters, digits, '.', '_' or '-', e.g. feature/rate-limit",
            )
        return cls(parts[0], parts[1])


def check_worker_id(worker_id: str, source: str = "worker id") -> str:
    if not _WORKER.match(worker_id):
        raise InputError(f"{source}: {worker_id!r} is not a worker id", hint="use lower-case letters, digits and '-'")
    return worker_id


def report_stem(path: Path) -> str | None:
    """`<stem>` of `<stem>.md` or `<stem>.data.json`; None for any other name."""
    name = Path(path).name
    for suffix in (DATA_SUFFIX, MARKDOWN_SUFFIX):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def markdown_of(path: Path) -> Path:
    """The Markdown report of a report file (`x.data.json` or a plain `x.json` -> `x.md`)."""
    stem = report_stem(path)
    if stem is None:
        stem = Path(path).name.removesuffix(".json")
    return Path(path).with_name(stem + MARKDOWN_SUFFIX)


def data_of(path: Path) -> Path:
    """The data file of a report file (`x.md` or a plain `x` -> `x.data.json`)."""
    stem = report_stem(path)
    return Path(path).with_name((stem if stem is not None else Path(path).name) + DATA_SUFFIX)


def translation_of(report: Path, language: str) -> Path:
    """The translator's sidecar of a report: `<report>.<lang>.md` beside it (DESIGN §8)."""
    return Path(report).with_name(f"{Path(report).stem}.{language}.md")


@dataclass(frozen=True)
class RunLayout:
    project_root: Path
    run_id: str

    @property
    def dir(self) -> Path:
        return self.project_root / OKSTRA_DIR / RUNS_DIR / self.run_id

    @property
    def manifest(self) -> Path:
        return self.dir / MANIFEST

    @property
    def team_state(self) -> Path:
        return self.dir / "team-state.json"

    @property
    def launch_gate(self) -> Path:
        """team-dispatch's gate: its workers start their work once it has returned (core.gate)."""
        return self.dir / "launch.gate"

    @property
    def brief(self) -> Path:
        """The task brief render-bundle was given; every prompt of the run carries it."""
        return self.dir / "brief.md"

    @property
    def watchers(self) -> Path:
        """Watcher panes of the run (team-watch), apart from the dispatch records."""
        return self.dir / "watchers.json"

    @property
    def prompts_dir(self) -> Path:
        return self.dir / "prompts"

    @property
    def results_dir(self) -> Path:
        return self.dir / "results"

    @property
    def logs_dir(self) -> Path:
        return self.dir / "logs"

    @property
    def reports_dir(self) -> Path:
        return self.dir / REPORTS_DIR

    @property
    def responses_dir(self) -> Path:
        return self.reports_dir / RESPONSES_DIR

    def _attempt_name(self, worker_id: str, attempt: int) -> str:
        return worker_id if attempt == 1 else f"{worker_id}.attempt-{attempt}"

    def prompt_path(self, worker_id: str, attempt: int = 1) -> Path:
        return self.prompts_dir / f"{self._attempt_name(worker_id, attempt)}.md"

    def result_path(self, worker_id: str, attempt: int = 1) -> Path:
        return self.results_dir / f"{self._attempt_name(worker_id, attempt)}.md"

    def evidence_dir(self, worker_id: str) -> Path:
        return self.results_dir / f"{worker_id}.evidence"

    def log_path(self, worker_id: str, attempt: int = 1) -> Path:
        return self.logs_dir / f"{self._attempt_name(worker_id, attempt)}.log"

    def heartbeat_path(self, worker_id: str, attempt: int = 1) -> Path:
        return self.logs_dir / f"{self._attempt_name(worker_id, attempt)}.heartbeat"

    def answer_scratch_path(self, worker_id: str, attempt: int = 1) -> Path:
        """Where a CLI that writes its last message to a file (codex -o) writes it; never the result."""
        return self.logs_dir / f"{self._attempt_name(worker_id, attempt)}.answer"

    def scope_record_path(self, worker_id: str, attempt: int = 1) -> Path:
        """What a worker changed in its work tree, recorded by worker-run for stage-check."""
        return self.logs_dir / f"{self._attempt_name(worker_id, attempt)}.scope.json"

    @property
    def worktrees(self) -> Path:
        """The git worktrees this run created (--isolate worktree); teardown removes only these."""
        return self.dir / "worktrees.json"

    def worktree_dir(self, worker_id: str) -> Path:
        return self.dir / "worktrees" / worker_id

    def worktree_branch(self, worker_id: str) -> str:
        return f"okstra/{self.run_id}/{worker_id}"

    @property
    def spend(self) -> Path:
        """The run's budget (render-bundle --budget-usd) and price date."""
        return self.dir / "spend.json"

    def report_stem(self, task_type: str, report_number: int) -> str:
        return names.report_stem(task_type, report_number)

    def report_markdown(self, task_type: str, report_number: int) -> Path:
        return self.reports_dir / f"{self.report_stem(task_type, report_number)}{MARKDOWN_SUFFIX}"

    def report_data(self, task_type: str, report_number: int) -> Path:
        return data_of(self.report_markdown(task_type, report_number))

    def report_html(self, task_type: str, report_number: int) -> Path:
        return self.reports_dir / f"{self.report_stem(task_type, report_number)}.html"

    def report_translation(self, task_type: str, report_number: int, language: str) -> Path:
        return translation_of(self.report_markdown(task_type, report_number), language)

    def sidecar(self, task_type: str, report_number: int) -> Path:
        return self.responses_dir / names.sidecar_name(self.report_stem(task_type, report_number))

    def relative(self, path: Path) -> str:
        return paths.relative(self.project_root, path)


@dataclass(frozen=True)
class ProjectLayout:
    root: Path

    @property
    def okstra_dir(self) -> Path:
        return self.root / OKSTRA_DIR

    @property
    def active_run(self) -> Path:
        return active_run.path_for(self.root)

    @property
    def config(self) -> Path:
        return self.okstra_dir / "config.yaml"

    @property
    def hooks_install_record(self) -> Path:
        """What hooks-install added to .claude/settings.json, so --uninstall removes only that."""
        return self.okstra_dir / "hooks-install.json"

    def task_dir(self, key: TaskKey) -> Path:
        return self.okstra_dir / "tasks" / key.group / key.task_id

    def task_json(self, key: TaskKey) -> Path:
        return self.task_dir(key) / "task.json"

    def consumers_log(self, key: TaskKey) -> Path:
        return self.task_dir(key) / "consumers.jsonl"

    def run(self, run_id: str) -> RunLayout:
        return RunLayout(self.root, run_id)

    def run_id(self, key: TaskKey, run_number: int) -> str:
        return f"{key.group}--{key.task_id}--r{run_number:03d}"


def for_project(root: Path) -> ProjectLayout:
    return ProjectLayout(Path(root).resolve())


def run_of_reports_folder(root: Path, folder: Path) -> RunLayout | None:
    """The run whose `reports/` folder `folder` is (both resolved), else None."""
    runs = for_project(root).okstra_dir.resolve() / names.RUNS_DIR
    if folder.name == names.REPORTS_DIR and folder.parent.parent == runs:
        return for_project(root).run(folder.parent.name)
    return None


def report_output(root: Path, data: Path, target: Path, *, suffix: str, given: bool) -> Path:
    """Where render-final-report (`.md`) and render-report-views (`.html`) may write the
    rendering of `data` (DESIGN §14). A run's report renders only into that run's
    `reports/` folder, never into `user-responses/` (the sidecars); report data elsewhere
    in `.okstra/` is not rendered at all; report data outside `.okstra/` renders beside
    itself, and `--output` (`given`) is refused for it, since no run says where else is
    safe. The folder check is `core.paths.own_file`, the rule worker-run uses for its result."""
    okstra = for_project(root).okstra_dir
    folder = Path(data).resolve().parent
    in_run = run_of_reports_folder(root, folder) is not None
    hint = "omit --output: the output goes beside the report data"
    if paths.is_inside(folder, okstra.resolve()) and not in_run:
        raise InputError(f"{data} is inside {okstra} but not in a run's reports folder", hint="render a run's report")
    if given and not in_run:
        raise InputError(f"--output: {target} is not in a run's reports folder ({data} is not a run's report)", hint=hint)
    if Path(target).suffix != suffix:
        raise InputError(f"--output: {target} is not a {suffix} file", hint=f"name a {suffix} file in {folder}")
    never = (folder / names.RESPONSES_DIR,) if in_run else (okstra,)
    return paths.own_file(target, folder, source="--output", hint=hint, never=never)


def project_root_of(manifest_path: Path) -> Path:
    """`<root>/.okstra/runs/<run-id>/run-manifest.json` -> `<root>`; anything else is refused."""
    resolved = Path(manifest_path).resolve()
    parts = resolved.parts
    if len(parts) < 5 or parts[-4:-2] != (OKSTRA_DIR, RUNS_DIR) or parts[-1] != MANIFEST or not resolved.is_file():
        raise InputError(
            f"--run-manifest: {str(manifest_path)!r} is not a run manifest at <project>/.okstra/runs/<run-id>/run-manifest.json",
            hint="pass the run-manifest.json that render-bundle wrote",
        )
    return resolved.parents[3]


# -- the run handle ---------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """The run a command works on, opened once by `open_run` and passed down."""

    root: Path
    layout: RunLayout
    manifest_path: Path
    manifest: RunManifest
    team_state_path: Path

    @property
    def project(self) -> ProjectLayout:
        return ProjectLayout(self.root)

    def state(self) -> team_state.TeamState:
        return team_state.load(self.team_state_path)

    def resolve(self, value: str, source: str) -> Path:
        """A path recorded in the run's state, resolved inside the project (DESIGN §14)."""
        return paths.resolve_inside(self.root, value, source=source)


def _manifest_path(manifest: str | os.PathLike[str], project_root: str | os.PathLike[str] | None, cwd: Path | None) -> Path:
    """Where `--run-manifest` points. Inside the project we work in (DESIGN §14): the one
    given (`--project-root`, OKSTRA_PROJECT_ROOT) or around `cwd`; with neither, the
    project the manifest itself names."""
    try:
        root = paths.find_project_root(cwd, explicit=project_root)
    except InputError:
        if project_root is not None:
            raise
        return (Path(cwd) if cwd is not None else Path.cwd()).joinpath(manifest).resolve()
    return paths.resolve_inside(root, manifest, source="--run-manifest", base=cwd or Path.cwd())


def open_run(
    manifest: str | os.PathLike[str] | None,
    *,
    project_root: str | os.PathLike[str] | None = None,
    cwd: Path | None = None,
) -> Run:
    """The run named by `--run-manifest`, else the active run of the project
    (`--project-root`, OKSTRA_PROJECT_ROOT, or the one around `cwd`)."""
    if manifest is not None:
        manifest_path = _manifest_path(manifest, project_root, cwd)
        root = project_root_of(manifest_path)
    else:
        root = paths.find_project_root(cwd, explicit=project_root)
        active = active_run.load(root)
        if active is None:
            raise InputError(
                f"no active run in {root} ({active_run.ACTIVE_RUN_FILE})",
                hint="pass --run-manifest .okstra/runs/<run-id>/run-manifest.json",
            )
        manifest_path = paths.resolve_inside(root, active.run_manifest_path, source="active-run.json runManifestPath")
    loaded = run_manifest.load(manifest_path)
    layout = RunLayout(root, loaded.run_id)
    if layout.manifest != manifest_path:
        raise StateError(f"{manifest_path}: runId {loaded.run_id!r} does not match its folder {manifest_path.parent.name!r}")
    state_path = paths.resolve_inside(root, loaded.team_state_path, source=f"{manifest_path}: teamStatePath")
    return Run(root, layout, manifest_path, loaded, state_path)


def new_attempt(
    run: RunLayout,
    *,
    worker_id: str,
    role: str,
    provider: str,
    model_id: str,
    attempt: int,
    result_path: Path | None = None,
    liveness_mode: str = "heartbeat",
) -> Dispatch:
    """A pending dispatch record of one attempt, every path fresh from the run layout.

    `result_path` overrides the worker's result file (the translator writes the
    report's translation sidecar, DESIGN §8).
    """
    artifact = run.heartbeat_path(worker_id, attempt) if liveness_mode == "heartbeat" else run.log_path(worker_id, attempt)
    return Dispatch(
        worker_id=worker_id,
        role=role,
        provider=provider,
        model_id=model_id,
        status=PENDING,
        attempt=attempt,
        round=roles.round_of(role),
        prompt_path=run.relative(run.prompt_path(worker_id, attempt)),
        result_path=run.relative(result_path or run.result_path(worker_id, attempt)),
        log_path=run.relative(run.log_path(worker_id, attempt)),
        liveness_mode=liveness_mode,
        liveness_artifact=run.relative(artifact),
    )


# Sequences (DESIGN §2): one counter per category in task.json, advanced under lock.
# A category is `claim`ed when its number is used up at once (runs, prompts), or
# `peek`ed and later `commit`ted when the number is used only once the artefact
# exists (reports): a run that wrote no report leaves its report number free.


def _task_default() -> dict[str, Any]:
    return {"schemaVersion": "1.0", "sequences": {}}


def claim(layout: ProjectLayout, key: TaskKey, category: str) -> int:
    claimed: list[int] = []

    def mutate(doc: dict[str, Any]) -> bool:
        seqs = doc.setdefault("sequences", {})
        claimed.append(int(seqs.get(category, 0)) + 1)
        seqs[category] = claimed[0]
        return True

    fsio.update_json(layout.task_json(key), mutate, default=_task_default)
    return claimed[0]


def peek(layout: ProjectLayout, key: TaskKey, category: str) -> int:
    path = layout.task_json(key)
    if not path.exists():
        return 1
    return int(fsio.read_json(path, what="task file").get("sequences", {}).get(category, 0)) + 1


def commit(layout: ProjectLayout, key: TaskKey, category: str, number: int) -> None:
    def mutate(doc: dict[str, Any]) -> bool:
        seqs = doc.setdefault("sequences", {})
        if int(seqs.get(category, 0)) >= number:
            return False
        seqs[category] = number
        return True

    fsio.update_json(layout.task_json(key), mutate, default=_task_default)
