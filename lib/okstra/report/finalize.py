"""The run's end-of-report step (report-finalize): render, commit the report number, record the status.

Every file name derived from the report uses the run's **report** number (from
the manifest), never the run number: the data file, the Markdown, the HTML
view and the user-response sidecar. The report sequence is committed only once
the report exists, so a run that produced no report leaves its number free.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra.core import fsio
from okstra.core.errors import InputError
from okstra.model import layout as run_layout
from okstra.model import run_manifest
from okstra.report import render

FINAL_STATUS = "completed"
REPORTS = "reports"


@dataclass(frozen=True)
class Finalized:
    manifest: Path
    data: Path
    markdown: Path
    last_valid: Path | None
    html: Path | None
    sidecar: Path
    report_number: int
    run_number: int
    final_status: str
    warnings: tuple[str, ...] = ()


def _record_status(path: Path, status: str) -> None:
    def mutate(raw: Any) -> bool:
        run_manifest.RunManifest.from_dict(raw, str(path))  # still a manifest under the lock
        if raw.get("finalStatus") == status:
            return False
        raw["finalStatus"] = status
        return True

    fsio.update_json(path, mutate)


def finalize(handle: run_layout.Run, *, with_html: bool = True) -> Finalized:
    root, mpath, manifest, run = handle.root, handle.manifest_path, handle.manifest, handle.layout
    project = handle.project
    key = run_layout.TaskKey.parse(manifest.task_key, source=f"{run.relative(mpath)}: taskKey")
    number = manifest.report_number
    data = run.report_data(manifest.task_type, number)
    if not data.is_file():
        raise InputError(
            f"{run.relative(data)}: no report data for run {manifest.run_id} (report {number:03d})",
            hint="the report-writer writes it; render it with render-final-report once it exists",
        )
    expected: Mapping[str, Any] = {
        "taskKey": manifest.task_key,
        "taskType": manifest.task_type,
        "runId": manifest.run_id,
        "runNumber": manifest.run_number,
        "reportNumber": number,
    }
    done = render.render_final_report(
        root, str(data), str(run.report_markdown(manifest.task_type, number)), expected_header=expected
    )
    html = None
    warnings = list(done.warnings)
    if with_html:
        from okstra.report import views

        view = views.render_view(root, str(done.output), str(run.report_html(manifest.task_type, number)))
        html = view.output
        if view.recorded_refused:
            warnings.append(f"warning: {view.recorded_refused}")
    run_layout.commit(project, key, REPORTS, number)
    _record_status(mpath, FINAL_STATUS)
    return Finalized(
        manifest=mpath,
        data=data,
        markdown=done.output,
        last_valid=done.last_valid,
        html=html,
        sidecar=run.sidecar(manifest.task_type, number),
        report_number=number,
        run_number=manifest.run_number,
        final_status=FINAL_STATUS,
        warnings=tuple(warnings),
    )
