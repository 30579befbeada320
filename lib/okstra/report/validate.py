"""Final report data: the schema (with format checking) and the cross-file facts (DESIGN §8).

`problems(document, project_root)` lists every problem as `<json path>: <message>`:
first the schema's (all of them, not only the first), then — for a valid
lead-authored fallback — the facts other files must confirm: the failed
report-writer dispatch is recorded in the run's team state with exactly the
stated reason, and the approving sidecar exists in the run and approves
REPORT AUTHORING.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from okstra.core import fsio, paths, schemas
from okstra.core.errors import OkstraError
from okstra.model import dispatch, roles, team_state
from okstra.model import layout as run_layout

SCHEMA = "final-report-v2.0"
LEAD_AUTHOR = "Okstra lead"
RELEASE_HANDOFF = "release-handoff"
APPROVED = "approved"
FAILED_STATUSES = dispatch.TERMINAL_STATUSES - {dispatch.COMPLETED}

# jsonschema words a `not: {}` ("must not be present") rule as "<value> should not be valid under {}".
_FORBIDDEN = re.compile(r"^(?P<path>\S+): .* should not be valid under \{\}$", re.S)
# ... and a one-line text rule as "<value> does not match '^(?![\\s\\S]*[\\r\\n\\u0000])...'".
_WHY_FORBIDDEN = {
    "leadAuthoredFallback": f"must not be present: only a report whose reportAuthor is {LEAD_AUTHOR!r} "
    f"outside {RELEASE_HANDOFF} carries a lead-authored fallback",
    "options": "must not be present: only a question of kind 'choice' has options",
}


def load(path: Path) -> tuple[bytes, Any]:
    """The raw bytes and the parsed JSON of a report data file (exit 2 when unreadable or not JSON)."""
    raw = fsio.read_bytes(Path(path), what="report data file")  # never blocks on a FIFO (DESIGN §14)
    return raw, fsio.parse_json(fsio.decoded(raw, path), str(path))


def _reword(line: str) -> str:
    """Say in words what `not: {}` means (patterns say it through their `x-expected`)."""
    match = _FORBIDDEN.match(line)
    if not match:
        return line
    path = match.group("path")
    key = re.sub(r"\[\d+\]$", "", path).rsplit(".", 1)[-1]
    return f"{path}: {_WHY_FORBIDDEN.get(key, 'must not be present here')}"


def schema_problems(document: Any) -> list[str]:
    return [_reword(line) for line in schemas.problems(SCHEMA, document)]


def is_lead_fallback(document: Mapping[str, Any]) -> bool:
    header = document.get("header", {})
    return header.get("reportAuthor") == LEAD_AUTHOR and header.get("taskType") != RELEASE_HANDOFF


def _approval_status(path: Path, source: str) -> str | None:
    """The REPORT AUTHORING status recorded in a sidecar, or None when it has no such block."""
    from okstra.report import sidecar  # the sidecar format lives in one room

    block = sidecar.read_state(path, source).report_authoring
    return None if block is None else block.status


def cross_file_problems(document: Mapping[str, Any], project_root: Path) -> list[str]:
    """Facts of a (schema-valid) lead-authored fallback that the run's files must confirm."""
    if not is_lead_fallback(document):
        return []
    header = document["header"]
    fallback = header["leadAuthoredFallback"]
    root = Path(project_root)
    run = run_layout.for_project(root).run(header["runId"])
    found: list[str] = []
    where = "$.header.leadAuthoredFallback"

    if not run.team_state.is_file():
        found.append(f"$.header.runId: run {header['runId']!r} has no team state at {run.relative(run.team_state)}")
    else:
        state = team_state.load(run.team_state)
        source = run.relative(run.team_state)
        failed = [d for d in state.dispatches if d.role == roles.REPORT_WRITER and d.status in FAILED_STATUSES]
        if not failed:
            found.append(f"{where}: {source} records no failed {roles.REPORT_WRITER} dispatch")
        elif not any(d.reason == fallback["dispatchFailureReason"] for d in failed):
            recorded = "; ".join(f"{d.worker_id} attempt {d.attempt}: {d.reason!r}" for d in failed)
            found.append(
                f"{where}.dispatchFailureReason: differs from the reason recorded for every failed "
                f"{roles.REPORT_WRITER} dispatch in {source} ({recorded})"
            )

    sidecar_path = paths.resolve_inside(root, fallback["approvalSidecar"], source=f"{where}.approvalSidecar")
    shown = fallback["approvalSidecar"]
    if not paths.is_inside(sidecar_path, run.responses_dir.resolve()):
        found.append(f"{where}.approvalSidecar: {shown!r} is not a user-response sidecar of run {header['runId']!r}")
    elif not sidecar_path.is_file():
        found.append(f"{where}.approvalSidecar: {shown!r} does not exist")
    else:
        try:
            status = _approval_status(sidecar_path, shown)
        except OkstraError as exc:
            found.append(f"{where}.approvalSidecar: {shown!r} is not a readable sidecar: {exc}")
        else:
            if status != APPROVED:
                said = "has no REPORT AUTHORING block" if status is None else f"records REPORT AUTHORING {status!r}"
                found.append(f"{where}.approvalSidecar: {shown!r} {said}, not an approval")
    return found


def problems(document: Any, project_root: Path) -> list[str]:
    """Every problem of a report data document; cross-file facts only once the schema passes."""
    found = schema_problems(document)
    if found:
        return found
    return cross_file_problems(document, project_root)
