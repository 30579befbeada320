"""Where every file of okstra's state lives under `<project>/.okstra/` (DESIGN §2).

This module is the one definition of the run layout; every other module asks
it for paths instead of joining strings itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra.core import fsio, paths
from okstra.core.errors import InputError
from okstra.model import active_run

OKSTRA_DIR = ".okstra"
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


def translation_of(report: Path, language: str) -> Path:
    """The translator's sidecar of a report: `<report>.<lang>.md` beside it (DESIGN §8)."""
    return Path(report).with_name(f"{Path(report).stem}.{language}.md")


@dataclass(frozen=True)
class RunLayout:
    project_root: Path
    run_id: str

    @property
    def dir(self) -> Path:
        return self.project_root / OKSTRA_DIR / "runs" / self.run_id

    @property
    def manifest(self) -> Path:
        return self.dir / "run-manifest.json"

    @property
    def team_state(self) -> Path:
        return self.dir / "team-state.json"

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
        return self.dir / "reports"

    @property
    def responses_dir(self) -> Path:
        return self.reports_dir / "user-responses"

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
        """Every file derived from a report uses the **report** number, never the run number."""
        return f"final-report-{task_type}-{report_number:03d}"

    def report_markdown(self, task_type: str, report_number: int) -> Path:
        return self.reports_dir / f"{self.report_stem(task_type, report_number)}.md"

    def report_data(self, task_type: str, report_number: int) -> Path:
        return self.reports_dir / f"{self.report_stem(task_type, report_number)}.data.json"

    def report_html(self, task_type: str, report_number: int) -> Path:
        return self.reports_dir / f"{self.report_stem(task_type, report_number)}.html"

    def report_translation(self, task_type: str, report_number: int, language: str) -> Path:
        return translation_of(self.report_markdown(task_type, report_number), language)

    def sidecar(self, task_type: str, report_number: int) -> Path:
        return self.responses_dir / f"user-response-{task_type}-{report_number:03d}.md"

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

    def resolve(self, value: str, source: str) -> Path:
        return paths.resolve_inside(self.root, value, source=source)


def for_project(root: Path) -> ProjectLayout:
    return ProjectLayout(Path(root).resolve())


def project_root_of(manifest_path: Path) -> Path:
    """`<root>/.okstra/runs/<run-id>/run-manifest.json` -> `<root>`; anything else is refused."""
    resolved = Path(manifest_path).resolve()
    parts = resolved.parts
    if len(parts) < 5 or parts[-4:-2] != (OKSTRA_DIR, "runs") or not resolved.is_file():
        raise InputError(
            f"--run-manifest: {str(manifest_path)!r} is not a run manifest at <project>/.okstra/runs/<run-id>/run-manifest.json",
            hint="pass the run-manifest.json that render-bundle wrote",
        )
    return resolved.parents[3]


def locate_run(manifest: str | None, *, root: Path | None = None, cwd: Path | None = None) -> tuple[Path, Path]:
    """(project root, run manifest path) of the run a command works on.

    `--run-manifest` names it (its project is the folder above its `.okstra/runs/`;
    with `root` given it must lie inside that project); else the active run of
    `root`, by default the project around `cwd`.
    """
    if manifest is not None:
        path = paths.argument(root, manifest, source="--run-manifest") if root is not None else Path(manifest).resolve()
        return project_root_of(path), path
    root = Path(root).resolve() if root is not None else paths.find_project_root(cwd)
    active = active_run.load(root)
    if active is None:
        raise InputError(
            f"no active run in {root} ({active_run.ACTIVE_RUN_FILE})",
            hint="pass --run-manifest .okstra/runs/<run-id>/run-manifest.json",
        )
    return root, paths.resolve_inside(root, active.run_manifest_path, source="active-run.json runManifestPath")


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
