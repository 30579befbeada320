"""The HTML view of a final report (DESIGN §8, §9): one self-contained, printable page.

No network: CSS and JS are inline, nothing refers to an external URL. Every
report text is escaped by Jinja2's autoescape (`.html.j2` templates). The run
metadata is embedded as JSON in `<script type="application/json" id="okstra-meta">`
(with `<`, `>`, `&` written as `\\u003c`... so no value can close the block) and
shown on the page. The **Export user response** form downloads the sidecar
produced by `templates/views/sidecar.js` (the browser twin of
`report.sidecar.serialize`), inlined when the page is rendered; it is pre-filled
with what the run's sidecar already holds and names the `user-response-import`
command that brings the download back. Markdown in text fields goes through
`report.markdown` (raw HTML off); the translation is rendered the same way,
behind a language switch.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra.core import fsio, paths
from okstra.core.errors import InputError, ProblemsFound, StateError
from okstra.model import layout as run_layout
from okstra.report import markdown, render, user_response, validate
from okstra.report import sidecar as sc

HTML_TEMPLATE = "report/final-report.html.j2"
SIDECAR_JS = render.TEMPLATES / "views" / "sidecar.js"
VIEW_JS = render.TEMPLATES / "report" / "final-report-view.js"
# Text that could end an inline <script> element early, or (after a `<!--`) keep it open:
# with neither `<script` nor `</script` inside, a script's text cannot leave its element.
_SCRIPT_BREAKERS = re.compile(r"</?script", re.IGNORECASE)
SEVERITIES = ("critical", "high", "medium", "low", "info")


@dataclass(frozen=True)
class View:
    output: Path
    data: Path
    report: Path
    sha256: str
    translation: Path | None
    translation_missing: bool
    recorded_refused: str | None = None


def sources(project_root: Path, report_arg: str) -> tuple[Path, Path]:
    """(markdown report, data file) for REPORT given as either of them."""
    given = paths.argument(project_root, report_arg, source="REPORT")
    if run_layout.report_stem(given) is not None:
        return run_layout.markdown_of(given), run_layout.data_of(given)
    raise InputError(
        f"REPORT: {report_arg!r} is neither a report (.md) nor its data (.data.json)", hint="pass the report's .md or .data.json"
    )


def default_output(report: Path) -> Path:
    return report.with_suffix(".html")


def translation_path(report: Path, language: str) -> Path:
    """The translator's sidecar `<report>.<lang>.md` beside the report."""
    return run_layout.translation_of(report, language)


def script_json(document: Any) -> str:
    """JSON safe inside a <script> element: no `<`, `>` or `&` appears literally."""
    text = json.dumps(document, ensure_ascii=False, indent=1)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def inline_script(path: Path) -> str:
    """A JS file to inline in a <script> element; refused if it could close that element."""
    text = fsio.read_text(path, what="script")
    if _SCRIPT_BREAKERS.search(text):
        raise InputError(f"{path}: contains '<script' or '</script' and cannot be inlined safely")
    return text


def _recorded(root: Path, sidecar: Path) -> tuple[dict[str, Any] | None, str | None]:
    """What the run's sidecar for this report already holds (the form is pre-filled with it),
    and why it was not loaded when it was refused (its seal missing or differing, or not a
    sidecar: DESIGN §14). The page then starts empty and says so, in one line naming the
    file and what to do: the user must not re-answer unaware that earlier answers exist."""
    if not os.path.lexists(sidecar):
        return None, None
    try:
        recorded = sc.read_state(sidecar, paths.relative(root, sidecar)).to_dict()
    except (InputError, StateError) as exc:
        return None, (
            f"Earlier answers were not loaded: {exc.message}. The answer form starts empty; restore that file and "
            "render this page again (render-report-views) to see them, or move it away before you import what you export here."
        )
    del recorded["meta"]
    return recorded, None


def _meta(root: Path, document: Mapping[str, Any], report: Path, data: Path, digest: str) -> dict[str, Any]:
    header = document["header"]
    run = run_layout.for_project(root).run(header["runId"])
    plan = document.get("implementationPlanning", {})
    sidecar = run.sidecar(header["taskType"], header["reportNumber"])
    source = paths.relative(root, report)
    recorded, refused = _recorded(root, sidecar)
    return {
        "taskKey": header["taskKey"],
        "taskType": header["taskType"],
        "reportNumber": header["reportNumber"],
        "runNumber": header["runNumber"],
        "runId": header["runId"],
        "sourceReport": source,
        "sourceData": paths.relative(root, data),
        "sourceDataSha256": digest,
        "sidecarName": sidecar.name,
        "importCommand": f"user-response-import --from-downloads --report {shlex.quote(source)}",
        "recorded": recorded,
        "recordedRefused": refused,
        "reportLanguage": header.get("reportLanguage"),
        "openQuestions": document["openQuestions"],
        "implementationOptions": [{"id": o["id"], "name": o["name"]} for o in plan.get("implementationOptions", [])],
        "decisionsRequired": document["decisionsRequired"],
    }


def render_html(
    document: Mapping[str, Any], meta: Mapping[str, Any], translation: str | None, translation_file: str | None
) -> str:
    import markupsafe  # with jinja2: heavy imports stay inside the functions that need them

    counts = {severity: 0 for severity in SEVERITIES}
    for finding in document["findings"]:
        counts[finding["severity"]] = counts.get(finding["severity"], 0) + 1
    return (
        render.environment()
        .get_template(HTML_TEMPLATE)
        .render(
            md=lambda text: markupsafe.Markup(markdown.to_html(text)),
            severity_counts=counts,
            recorded_by_text=user_response.recorded_by_text,
            report=document,
            meta=meta,
            meta_json=script_json(meta),
            fallback_note=render.fallback_note(document),
            translation=translation,
            translation_file=translation_file,
            sidecar_js=inline_script(SIDECAR_JS),
            view_js=inline_script(VIEW_JS),
        )
    )


def render_view(project_root: Path, report_arg: str, output_arg: str | None = None) -> View:
    root = Path(project_root).resolve()
    report, data = sources(root, report_arg)
    given = paths.argument(root, output_arg, source="--output") if output_arg else default_output(report)
    output = run_layout.report_output(root, data, given, suffix=".html", given=output_arg is not None)
    raw, document = validate.load(data)
    found = validate.problems(document, root)
    if found:
        raise ProblemsFound(found, summary=f"{data}: {len(found)} problem(s)")
    digest = hashlib.sha256(raw).hexdigest()
    meta = _meta(root, document, report, data, digest)
    language = document["header"].get("reportLanguage")
    translated: Path | None = None
    text: str | None = None
    if language:
        translated = translation_path(report, language)
        if translated.is_file():
            text = fsio.read_text(translated, what="translation")
    fsio.atomic_write(output, render_html(document, meta, text, paths.relative(root, translated) if translated else None))
    return View(
        output=output,
        data=data,
        report=report,
        sha256=digest,
        translation=translated if text is not None else None,
        translation_missing=bool(language) and text is None,
        recorded_refused=meta["recordedRefused"],
    )
