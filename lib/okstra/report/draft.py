"""The report data draft: okstra's records plus the report writer's content.

The header, participants and token usage come from the run's own records (the
manifest and team state), never from a worker's text, so no worker can change
who took part or what it cost; so do who stood in for a rate-limited worker
(`stoodInFor`, from the stand-in's `failoverFrom`) and the providers whose
breaker is open (`breakerOpen`). The report writer contributes only the content
keys (`CONTENT_KEYS`) in one fenced ```json block of its result. The draft is
written to the run's report data path (named by the **report** number) for
`render-final-report` / `report-finalize` to validate and render.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import okstra
from okstra.core import fsio
from okstra.core.clock import now_iso
from okstra.core.errors import InputError, RefusedError
from okstra.model import roles
from okstra.model.dispatch import COMPLETED, Dispatch
from okstra.model.layout import Run
from okstra.model.run_manifest import RunManifest
from okstra.model.team_state import TeamState
from okstra.report import render

CONTENT_KEYS = ("aiHandoffSummary", "findings", "openQuestions", "implementationPlanning", "verificationResults")
_JSON_BLOCK = re.compile(r"^```json[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)


@dataclass(frozen=True)
class Draft:
    data_path: Path
    document: dict[str, Any]
    writer: Dispatch | None


def _usage_of(dispatches: list[Dispatch]) -> dict[str, Any] | None:
    reported = [d.usage for d in dispatches if d.usage is not None]
    if not reported:
        return None

    def total(attr: str) -> int | float | None:
        values = [getattr(u, attr) for u in reported if getattr(u, attr) is not None]
        return sum(values) if values else None

    cost = total("cost_usd")
    return {
        "inputTokens": total("input_tokens"),
        "outputTokens": total("output_tokens"),
        "cachedTokens": total("cached_tokens"),
        "costUsd": round(cost, 6) if cost is not None else None,
    }


def report_writer(state: TeamState) -> Dispatch | None:
    """The newest completed report-writer dispatch, if any."""
    done = [d for d in state.dispatches if d.role == roles.REPORT_WRITER and d.status == COMPLETED]
    return max(done, key=lambda d: d.attempt) if done else None


def decisions_required(task_type: str, content: dict[str, Any]) -> dict[str, bool]:
    options = (content.get("implementationPlanning") or {}).get("implementationOptions") or []
    return {
        "planDecision": task_type == "implementation-planning",
        "analysisReview": task_type == "analysis",
        "directionSelection": task_type == "implementation-planning" and len(options) >= 2,
        "reportAuthoring": False,
    }


def skeleton(manifest: RunManifest, state: TeamState, *, owner: str, writer: Dispatch | None) -> dict[str, Any]:
    """Everything okstra knows for certain about the report, without its content."""
    lead = next((p for p in manifest.participants if p.role == roles.LEADER), None)
    author = "Okstra lead"
    if writer is not None:
        author = f"report-writer ({_display(manifest, writer)}, {writer.model_id})"
    header: dict[str, Any] = {
        "taskKey": manifest.task_key,
        "taskType": manifest.task_type,
        "reportOwner": owner,
        "reportAuthor": author,
        "leadModel": lead.model_display if lead else "unknown",
        "okstraVersion": okstra.__version__,
        "runNumber": manifest.run_number,
        "reportNumber": manifest.report_number,
        "runId": manifest.run_id,
        "createdAt": now_iso("seconds"),
    }
    if manifest.report_language:
        header["reportLanguage"] = manifest.report_language
    participants = []
    for p in manifest.participants:
        ran = [d for d in state.dispatches if d.worker_id == p.worker_id and d.role == p.role]
        entry = {"provider": p.provider_display, "role": p.role, "model": p.model_display, "modelId": p.model_id}
        if p.role != roles.LEADER:
            entry = {"workerId": p.worker_id, **entry}
        participants.append({**entry, "usage": _usage_of(ran), **_served_and_denied(ran), **_stood_in(manifest, ran)})
    document = {"schemaVersion": "2.0", "header": header, "participants": participants}
    breakers = state.open_breakers()
    if breakers:
        document["breakerOpen"] = [_provider_display(manifest, b) for b in breakers]
    return document


def _stood_in(manifest: RunManifest, dispatches: list[Dispatch]) -> dict[str, Any]:
    """Who a failover stand-in stood in for, with the reason recorded for it (README "Scope and spend")."""
    stood = [
        {
            "workerId": f.worker_id,
            "attempt": f.attempt,
            "provider": _provider_display(manifest, f.provider),
            "reason": render.oneline(f.reason),
        }
        for f in (d.failover_from for d in dispatches)
        if f is not None
    ]
    return {"stoodInFor": stood} if stood else {}


def _provider_display(manifest: RunManifest, provider_id: str) -> str:
    return next((p.provider_display for p in manifest.participants if p.provider == provider_id), provider_id)


def _served_and_denied(dispatches: list[Dispatch]) -> dict[str, Any]:
    """What the CLIs said beyond the answer (docs/DESIGN.md §5): another model than asked, denied writes."""
    extra: dict[str, Any] = {}
    mismatched = [d.served_model for d in dispatches if d.model_mismatch]
    if mismatched:
        extra["servedModel"] = mismatched[-1]
    denied = [{"tool": str(x.get("tool")), "target": x.get("target")} for d in dispatches for x in d.denials]
    if denied:
        extra["deniedWrites"] = denied
    return extra


def _display(manifest: RunManifest, dispatch: Dispatch) -> str:
    for p in manifest.participants:
        if p.worker_id == dispatch.worker_id:
            return p.provider_display
    return dispatch.provider


def content_of(result_text: str, source: str) -> dict[str, Any]:
    """The writer's content: the last fenced ```json block of its result, content keys only."""
    blocks = _JSON_BLOCK.findall(result_text)
    if not blocks:
        raise InputError(f"{source}: the report writer's result has no ```json block", hint="re-run the report-writer round")
    document = fsio.parse_json(blocks[-1], f"{source} (json block)")
    if not isinstance(document, dict):
        raise InputError(f"{source}: the json block is not an object")
    unknown = sorted(set(document) - set(CONTENT_KEYS))
    if unknown:
        raise InputError(
            f"{source}: the json block sets {', '.join(unknown)}, which okstra fills from its own records",
            hint=f"the writer may set only {', '.join(CONTENT_KEYS)}",
        )
    return document


def draft(handle: Run, *, owner: str = "the user", skeleton_only: bool = False) -> Draft:
    """Write the report data draft of a run; refuses when there is nothing to draft from."""
    manifest, run = handle.manifest, handle.layout
    state = handle.state()
    writer = None if skeleton_only else report_writer(state)
    document = skeleton(manifest, state, owner=owner, writer=writer)
    content: dict[str, Any] = {"aiHandoffSummary": "", "findings": [], "openQuestions": []}
    if writer is not None:
        source = writer.result_path or "report-writer result"
        result = handle.resolve(source, "team state resultPath")
        content.update(content_of(fsio.read_text(result, what="report-writer result"), source))
    elif not skeleton_only:
        raise RefusedError(
            f"run {manifest.run_id} has no completed report-writer dispatch",
            hint="run round-prepare --role report-writer and team-dispatch --round report, "
            "or pass --skeleton to draft the header and participants for a lead-authored report",
        )
    document.update(content)
    document["decisionsRequired"] = decisions_required(manifest.task_type, content)
    data_path = run.report_data(manifest.task_type, manifest.report_number)
    # Under the data file's lock, so this draft sweeps what an earlier one killed mid-write
    # left (DESIGN §14); every draft of this file takes the lock.
    fsio.write_locked(data_path, fsio.dumps(document))
    return Draft(data_path, document, writer)
