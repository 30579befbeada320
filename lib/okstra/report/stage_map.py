"""The Stage Map of an implementation plan (DESIGN §7).

Read from the structured data beside the plan (`plan.md` -> `plan.data.json`,
`implementationPlanning.stageMap`) when it exists with `schemaVersion` "2.0",
else (no data file, or one of another version) from the Markdown table under
the plan's `## Stage Map` heading:

    | Stage | Title | Depends On | Steps | Exit Contract |
    |---|---|---|---|---|
    | 1 | Limiter core | none | 4 | tests pass |

In a table cell `\\|` is a literal pipe and `\\\\` a literal backslash; any other
backslash is kept as is; cells are trimmed. Every row is checked; all problems
are reported at once (ProblemsFound, exit 1), each naming the file, the row and
the field. An unreadable file is an InputError (exit 2).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra.core import fsio, paths
from okstra.core.errors import InputError, ProblemsFound
from okstra.model import layout as run_layout

HEADING = "## Stage Map"
COLUMNS = ("Stage", "Title", "Depends On", "Steps", "Exit Contract")
SCHEMA_VERSION = "2.0"
_WHOLE = re.compile(r"[1-9][0-9]{0,5}")
_SEPARATOR_CELL = re.compile(r":?-{1,}:?")


@dataclass(frozen=True)
class StageRow:
    stage: int
    title: str
    depends_on: tuple[int, ...]
    step_count: int
    exit_contract_summary: str
    planned_paths: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "title": self.title,
            "dependsOn": ", ".join(str(d) for d in self.depends_on) or "none",
            "stepCount": self.step_count,
            "exitContractSummary": self.exit_contract_summary,
            "plannedPaths": list(self.planned_paths),
        }


@dataclass(frozen=True)
class StageMap:
    source: Path  # the file the rows were read from
    origin: str  # "data" (plan.data.json) or "markdown" (the ## Stage Map table)
    rows: tuple[StageRow, ...]

    def row(self, stage: int) -> StageRow:
        for row in self.rows:
            if row.stage == stage:
                return row
        known = ", ".join(str(r.stage) for r in self.rows)
        raise InputError(f"{self.source}: no stage {stage} in the stage map", hint=f"stages: {known}")

    def order(self) -> list[int]:
        """A topological order: a stage after all it depends on, lower numbers first on ties."""
        deps = {r.stage: set(r.depends_on) for r in self.rows}
        done: list[int] = []
        ready = sorted(s for s, d in deps.items() if not d)
        while ready:
            stage = ready.pop(0)
            done.append(stage)
            for other, d in deps.items():
                if stage in d:
                    d.discard(stage)
                    if not d and other not in done and other not in ready:
                        ready.append(other)
                        ready.sort()
        if len(done) != len(deps):  # unreachable for a checked map (dependencies are earlier stages)
            raise ProblemsFound([f"{self.source}: the stage map has a dependency cycle"])
        return done


# ---------------------------------------------------------------- Markdown cells


def split_row(line: str) -> list[str]:
    """The cells of one table line (`| a | b |`), unescaped and trimmed."""
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    cells: list[str] = []
    current: list[str] = []
    i = 0
    ended_with_pipe = False
    while i < len(text):
        ch = text[i]
        ended_with_pipe = False
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in "|\\":
            current.append(text[i + 1])
            i += 2
            continue
        if ch == "|":
            cells.append("".join(current).strip())
            current = []
            ended_with_pipe = True
        else:
            current.append(ch)
        i += 1
    if not ended_with_pipe:
        cells.append("".join(current).strip())
    return cells


# ---------------------------------------------------------------- reading


def _markdown_rows(text: str, source: str, problems: list[str]) -> list[tuple[str, dict[str, Any]]]:
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip().rstrip("#").strip().lower() == HEADING.lower()), None)
    if start is None:
        problems.append(f"{source}: no '{HEADING}' heading (and no {run_layout.DATA_SUFFIX} beside the plan)")
        return []
    table: list[tuple[int, str]] = []
    for number, line in enumerate(lines[start + 1 :], start + 2):
        stripped = line.strip()
        if not table and not stripped:
            continue
        if not stripped.startswith("|"):
            if table or stripped.startswith("#"):
                break
            continue  # prose between the heading and the table
        table.append((number, line))
    if len(table) < 2:
        problems.append(f"{source}: the '{HEADING}' section has no table")
        return []
    header = split_row(table[0][1])
    if [h.lower() for h in header] != [c.lower() for c in COLUMNS]:
        problems.append(
            f"{source}:{table[0][0]}: the table columns must be | {' | '.join(COLUMNS)} |, found | {' | '.join(header)} |"
        )
        return []
    separator = split_row(table[1][1])
    if len(separator) != len(COLUMNS) or not all(_SEPARATOR_CELL.fullmatch(c.replace(" ", "")) for c in separator):
        problems.append(f"{source}:{table[1][0]}: expected the separator row |---|---|---|---|---|")
        return []
    rows: list[tuple[str, dict[str, Any]]] = []
    for index, (number, line) in enumerate(table[2:], 1):
        where = f"{source}:{number}: row {index}"
        cells = split_row(line)
        if len(cells) != len(COLUMNS):
            problems.append(f"{where}: expected {len(COLUMNS)} cells, found {len(cells)} (escape a pipe in a cell as \\|)")
            continue
        rows.append(
            (
                where,
                {
                    "stage": cells[0],
                    "title": cells[1],
                    "dependsOn": cells[2],
                    "stepCount": cells[3],
                    "exitContractSummary": cells[4],
                },
            )
        )
    if not rows and not problems:
        problems.append(f"{source}: the stage map has no rows")
    return rows


def _data_rows(doc: Any, source: str, problems: list[str]) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(doc, Mapping):
        raise InputError(f"{source}: expected a JSON object (a final-report data file)")
    if doc.get("schemaVersion") != SCHEMA_VERSION:
        raise InputError(f"{source}: $.schemaVersion: expected {SCHEMA_VERSION!r}, found {doc.get('schemaVersion')!r}")
    planning = doc.get("implementationPlanning")
    stage_map = planning.get("stageMap") if isinstance(planning, Mapping) else None
    if not isinstance(stage_map, list) or not stage_map:
        problems.append(f"{source}: $.implementationPlanning.stageMap: missing or empty")
        return []
    rows: list[tuple[str, dict[str, Any]]] = []
    for i, raw in enumerate(stage_map):
        where = f"{source}: $.implementationPlanning.stageMap[{i}] (row {i + 1})"
        if not isinstance(raw, Mapping):
            problems.append(f"{where}: expected an object")
            continue
        rows.append((where, dict(raw)))
    return rows


def _whole(value: Any, where: str, field: str, problems: list[str], textual: bool) -> int | None:
    if textual and isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        return int(value.strip())
    if not textual and type(value) is int and value >= 1:
        return value
    problems.append(f"{where}: {field}: {str(value)[:40]!r} is not a positive whole number")
    return None


def _text(value: Any, where: str, field: str, problems: list[str]) -> str | None:
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{where}: {field}: must be non-empty text")
        return None
    if "\n" in value or "\r" in value:
        problems.append(f"{where}: {field}: must be one line")
        return None
    return value.strip()


def _depends(value: Any, where: str, problems: list[str]) -> tuple[int, ...] | None:
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{where}: dependsOn: must be 'none' or comma-separated stage numbers")
        return None
    if value.strip().lower() == "none":
        return ()
    numbers: list[int] = []
    for part in value.split(","):
        if not _WHOLE.fullmatch(part.strip()):
            problems.append(f"{where}: dependsOn: {value[:40]!r} must be 'none' or comma-separated stage numbers")
            return None
        numbers.append(int(part.strip()))
    if len(set(numbers)) != len(numbers):
        problems.append(f"{where}: dependsOn: {value[:40]!r} names a stage twice")
        return None
    return tuple(numbers)


def _planned(value: Any, where: str, problems: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(p, str) and p.strip() and "\n" not in p for p in value):
        problems.append(f"{where}: plannedPaths: expected a list of non-empty glob strings")
        return ()
    return tuple(value)


_FIELDS = {"stage", "title", "dependsOn", "stepCount", "exitContractSummary", "plannedPaths"}


def check_rows(raw_rows: list[tuple[str, dict[str, Any]]], problems: list[str], source: str, *, textual: bool) -> list[StageRow]:
    """Typed rows from raw ones (Markdown cells when `textual`, else JSON values); every
    problem, naming the row and the field, is appended to `problems`."""
    rows: list[StageRow] = []
    parsed: list[tuple[str, int, tuple[int, ...]]] = []  # rows whose stage and dependsOn read
    for where, raw in raw_rows:
        unknown = sorted(set(raw) - _FIELDS)
        if unknown:
            problems.append(f"{where}: unknown field(s) {', '.join(unknown)}")
        before = len(problems)
        stage = _whole(raw.get("stage"), where, "stage", problems, textual)
        title = _text(raw.get("title"), where, "title", problems)
        deps = _depends(raw.get("dependsOn"), where, problems)
        steps = _whole(raw.get("stepCount"), where, "stepCount", problems, textual)
        summary = _text(raw.get("exitContractSummary"), where, "exitContractSummary", problems)
        planned = _planned(raw.get("plannedPaths"), where, problems)
        if stage is not None and deps is not None:
            parsed.append((where, stage, deps))
        if len(problems) == before and stage and title and deps is not None and steps and summary:
            rows.append(StageRow(stage, title, deps, steps, summary, planned))
    numbers = {stage for _, stage, _ in parsed}
    seen: set[int] = set()
    for where, stage, deps in parsed:
        if stage in seen:
            problems.append(f"{where}: stage: {stage} appears twice")
        seen.add(stage)
        for d in deps:
            if d == stage:
                problems.append(f"{where}: dependsOn: stage {stage} depends on itself")
            elif d > stage:
                problems.append(f"{where}: dependsOn: stage {d} is not an earlier stage")
            elif d not in numbers:
                problems.append(f"{where}: dependsOn: stage {d} does not exist")
    if raw_rows:
        missing = [n for n in range(1, len(raw_rows) + 1) if n not in seen]
        if missing and len(parsed) == len(raw_rows):
            problems.append(
                f"{source}: stage numbers must run 1..{len(raw_rows)} without gaps; missing {', '.join(map(str, missing))}"
            )
    return rows


def load(plan_path: Path, *, root: Path | None = None) -> StageMap:
    """The checked stage map of a plan (`plan.md` or `plan.data.json`). Problems name the
    file (relative to `root` when given), the row and the field; all come at once."""
    plan_path = Path(plan_path)
    data_path = run_layout.data_of(plan_path)
    problems: list[str] = []

    def label(path: Path) -> str:
        return paths.relative(root, path) if root is not None and paths.is_inside(path.resolve(), root.resolve()) else str(path)

    doc = fsio.read_json(data_path, what="plan data file") if data_path.exists() or plan_path == data_path else None
    # A data file of another schema version (the original tool's) does not hold a 2.0 stage
    # map: the plan's Markdown table is read instead, as the original tool did (DESIGN §7).
    older = plan_path != data_path and isinstance(doc, Mapping) and doc.get("schemaVersion") != SCHEMA_VERSION
    if doc is not None and not older:
        source, origin = data_path, "data"
        raw_rows = _data_rows(doc, label(data_path), problems)
    else:
        source, origin = plan_path, "markdown"
        raw_rows = _markdown_rows(fsio.read_text(plan_path, what="plan"), label(plan_path), problems)
    rows = check_rows(raw_rows, problems, label(source), textual=origin == "markdown")
    if problems:
        raise ProblemsFound(problems, summary=f"{label(source)}: {len(problems)} problem(s) in the stage map")
    stage_map = StageMap(source, origin, tuple(sorted(rows, key=lambda r: r.stage)))
    stage_map.order()
    return stage_map
