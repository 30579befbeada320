"""`active-run.json` and the one loader that hydrates it (SPEC §2).

The file may be stored compacted: any block written as `{"$ref": "<path>"}`
stands for the JSON document at that project-relative path. Every reader goes
through `load()`, which hydrates those blocks, so no reader can see a
compacted stage as "no approved stage". This module is on the write-guard hot
path: it imports only the standard library and `okstra.core` basics.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra.core.errors import StateError

ACTIVE_RUN_FILE = os.path.join(".okstra", "active-run.json")
REF_KEY = "$ref"


@dataclass(frozen=True)
class ApprovedStage:
    number: int
    title: str
    planned_paths: tuple[str, ...]
    base_commit: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "title": self.title,
            "plannedPaths": list(self.planned_paths),
            "baseCommit": self.base_commit,
        }


@dataclass(frozen=True)
class ActiveRun:
    run_id: str
    task_key: str
    task_type: str
    run_dir: str
    run_manifest_path: str
    phase: str
    stage: ApprovedStage | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "schemaVersion": "1.0",
            "runId": self.run_id,
            "taskKey": self.task_key,
            "taskType": self.task_type,
            "runDir": self.run_dir,
            "runManifestPath": self.run_manifest_path,
            "phase": self.phase,
            "approvedStage": self.stage.to_dict() if self.stage else None,
        }


def path_for(project_root: Path) -> Path:
    return Path(project_root) / ACTIVE_RUN_FILE


def _read(path: Path, source: str) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise StateError(f"{source}: {path} does not exist", hint="the compacted active run points at a missing file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StateError(f"{source}: {path} is not readable JSON: {exc}") from None


def _hydrate(value: Any, root: Path, source: str, depth: int = 0) -> Any:
    if depth > 8:
        raise StateError(f"{source}: $ref chain deeper than 8 levels")
    if isinstance(value, Mapping):
        if set(value) == {REF_KEY}:
            target = (root / str(value[REF_KEY])).resolve()
            if root.resolve() not in (target, *target.parents):
                raise StateError(f"{source}: $ref {value[REF_KEY]!r} points outside the project {root}")
            return _hydrate(_read(target, source), root, source, depth + 1)
        return {k: _hydrate(v, root, source, depth) for k, v in value.items()}
    if isinstance(value, list):
        return [_hydrate(v, root, source, depth) for v in value]
    return value


def _stage(raw: Any, source: str) -> ApprovedStage | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or not isinstance(raw.get("number"), int):
        raise StateError(f"{source}: approvedStage must be an object with a whole-number 'number'")
    paths = raw.get("plannedPaths", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise StateError(f"{source}: approvedStage.plannedPaths must be a list of strings")
    return ApprovedStage(raw["number"], str(raw.get("title", "")), tuple(paths), raw.get("baseCommit"))


def from_dict(raw: Any, source: str) -> ActiveRun:
    if not isinstance(raw, Mapping):
        raise StateError(f"{source}: expected a JSON object")
    try:
        return ActiveRun(
            run_id=str(raw["runId"]),
            task_key=str(raw["taskKey"]),
            task_type=str(raw["taskType"]),
            run_dir=str(raw["runDir"]),
            run_manifest_path=str(raw["runManifestPath"]),
            phase=str(raw.get("phase", "")),
            stage=_stage(raw.get("approvedStage"), source),
        )
    except KeyError as exc:
        raise StateError(f"{source}: missing field {exc}", hint="re-run render-bundle to rewrite it") from None


def load(project_root: Path) -> ActiveRun | None:
    """The hydrated active run of `project_root`, or None when no run is active."""
    root = Path(project_root)
    path = path_for(root)
    if not path.exists():
        return None
    source = str(path)
    return from_dict(_hydrate(_read(path, source), root, source), source)
