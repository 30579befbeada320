"""Render a final report's data to Markdown (DESIGN §8), and keep the last valid input.

The template (`templates/report/final-report.md.j2`) is rendered with
StrictUndefined: a missing value is an error, never an empty string. The
Jinja2 environment is built once per process; jinja2 is imported only here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from okstra.core import fsio, home, memo, paths
from okstra.core.errors import ProblemsFound
from okstra.model import layout as run_layout
from okstra.report import validate

TEMPLATES = home.ROOT / "templates"
MARKDOWN_TEMPLATE = "report/final-report.md.j2"
LAST_VALID_SUFFIX = ".last-valid"


@functools.cache
def environment() -> Any:
    """One Jinja2 environment per process: strict undefined, HTML autoescape by extension."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        bytecode_cache=memo.template_cache(),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(["html", "htm", "xml", "html.j2"], default_for_string=True),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(cell=md_cell, oneline=oneline, tokens=tokens, cost=cost, number=number, fence=fence)
    return env


def oneline(value: Any) -> str:
    """Collapse every run of whitespace (newlines included) to one space."""
    return " ".join(str(value).split())


def md_cell(value: Any) -> str:
    """A Markdown table cell: one line, pipes escaped."""
    return oneline(value).replace("\\", "\\\\").replace("|", "\\|")


def fence(text: str) -> str:
    """A code fence longer than any run of backticks inside `text` (so a quote cannot close it)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def tokens(value: Any) -> str:
    return "—" if value is None else f"{value:,}"


def cost(value: Any) -> str:
    return "—" if value is None else f"${value:,.2f}"


def number(value: int) -> str:
    return f"{value:03d}"


def fallback_note(document: Mapping[str, Any]) -> str | None:
    """The one header line that says why a lead wrote this report, or None."""
    if not validate.is_lead_fallback(document):
        return None
    fb = document["header"]["leadAuthoredFallback"]
    return (
        f"Lead-authored fallback: report-writer dispatch failed — `{oneline(fb['dispatchFailureReason'])}`; "
        f"permitted by the user in `{fb['approvalSidecar']}`"
    )


def render_markdown(document: Mapping[str, Any]) -> str:
    """The Markdown report of a schema-valid document."""
    template = environment().get_template(MARKDOWN_TEMPLATE)
    return template.render(report=document, fallback_note=fallback_note(document))


def last_valid_path(data: Path) -> Path:
    return data.with_name(data.name + LAST_VALID_SUFFIX)


@dataclass
class Rendered:
    data: Path
    output: Path
    last_valid: Path | None
    warnings: list[str] = field(default_factory=list)
    document: Mapping[str, Any] = field(default_factory=dict)


def header_mismatches(document: Any, expected: Mapping[str, Any]) -> list[str]:
    """Header fields that differ from what the run says they are (e.g. its manifest)."""
    header = document.get("header") if isinstance(document, Mapping) else None
    if not isinstance(header, Mapping):
        return []
    return [
        f"$.header.{name}: {header.get(name)!r}, but the run manifest says {value!r}"
        for name, value in expected.items()
        if name in header and header[name] != value
    ]


def render_final_report(
    project_root: Path,
    data_arg: str,
    output_arg: str | None = None,
    *,
    snapshot: bool = True,
    expected_header: Mapping[str, Any] | None = None,
) -> Rendered:
    """Validate `data_arg`, render its Markdown atomically, then keep `<data>.last-valid`.

    Raises ProblemsFound (exit 1) with every problem when the data is not valid
    (or its header differs from `expected_header`); nothing is written then. A
    failure to write the copy is a warning only.
    """
    root = Path(project_root)
    data = paths.argument(root, data_arg, source="DATA")
    given = paths.argument(root, output_arg, source="--output") if output_arg else run_layout.markdown_of(data)
    output = run_layout.report_output(root, data, given, suffix=".md", given=output_arg is not None)
    raw, document = validate.load(data)
    found = validate.problems(document, root) + header_mismatches(document, expected_header or {})
    if found:
        raise ProblemsFound(found, summary=f"{data}: {len(found)} problem(s)")
    fsio.atomic_write(output, render_markdown(document))
    result = Rendered(data=data, output=output, last_valid=None, document=document)
    if snapshot:
        copy = last_valid_path(data)
        try:
            fsio.atomic_write(copy, raw)
            result.last_valid = copy
        except OSError as exc:
            result.warnings.append(f"warning: could not keep {copy.name} ({exc.strerror or exc}); the render itself succeeded")
    return result
