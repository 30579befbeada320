"""Recording and showing the user's responses to a report (DESIGN §9).

`write` merges answers and decision blocks into a report's sidecar under its
lock and writes it atomically; `show` says which open questions are still
unanswered; `list_run` lists the sidecars of a run. The format itself lives in
`report.sidecar`; paths come from `run.layout`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okstra.core import fsio, paths
from okstra.core.clock import now_iso
from okstra.core.errors import InputError, StateError
from okstra.model import run_manifest
from okstra.report import sidecar as sc
from okstra.run.layout import OKSTRA_DIR, RunLayout, for_project, locate_run

DATA_SUFFIX = ".data.json"


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    kind: str
    options: tuple[str, ...] = ()
    context: str | None = None


@dataclass(frozen=True)
class ReportRef:
    """One report inside a run's reports folder, and what its data header says."""

    run: RunLayout
    markdown: Path
    data: Path
    task_key: str
    task_type: str
    report_number: int
    run_id: str
    questions: tuple[Question, ...]
    option_ids: tuple[str, ...]

    @property
    def sidecar(self) -> Path:
        return self.run.sidecar(self.task_type, self.report_number)

    def question(self, question_id: str) -> Question | None:
        return next((q for q in self.questions if q.id == question_id), None)


# ---------------------------------------------------------------- the report


def _report_files(root: Path, value: str) -> tuple[RunLayout, Path, Path]:
    path = paths.argument(root, value, source="--report")
    name = path.name
    if name.endswith(DATA_SUFFIX):
        stem = name[: -len(DATA_SUFFIX)]
    elif name.endswith(".md"):
        stem = name[: -len(".md")]
    else:
        raise InputError(f"--report: {value!r} is neither a report .md nor its .data.json")
    reports = path.parent
    runs = root / OKSTRA_DIR / "runs"
    if reports.name != "reports" or reports.parent.parent != runs:
        raise InputError(
            f"--report: {value!r} is not inside a run's reports folder",
            hint="pass .okstra/runs/<run-id>/reports/<report>.md",
        )
    run = for_project(root).run(reports.parent.name)
    return run, reports / f"{stem}.md", reports / f"{stem}{DATA_SUFFIX}"


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"{where}: expected a string")
    return value


def load_report(root: Path, value: str) -> ReportRef:
    """The report named by `--report` (its .md or .data.json), read from its data file."""
    run, markdown, data_path = _report_files(root, value)
    source = paths.relative(root, data_path) if data_path.exists() else str(data_path)
    doc = fsio.read_json(data_path, what="report data file")
    if not isinstance(doc, Mapping) or not isinstance(doc.get("header"), Mapping):
        raise InputError(f"{source}: $.header: missing; not a final-report data file")
    header = doc["header"]
    for key in ("taskKey", "taskType", "runId"):
        _text(header.get(key), f"{source}: $.header.{key}")
    number = header.get("reportNumber")
    if type(number) is not int or number < 1:
        raise InputError(f"{source}: $.header.reportNumber: expected a whole number from 1")
    if header["runId"] != run.run_id:
        raise InputError(f"{source}: $.header.runId {header['runId']!r} does not match the run folder {run.run_id!r}")
    raw_questions = doc.get("openQuestions", [])
    if not isinstance(raw_questions, list):
        raise InputError(f"{source}: $.openQuestions: expected a list")
    questions: list[Question] = []
    for i, raw in enumerate(raw_questions):
        where = f"{source}: $.openQuestions[{i}]"
        if not isinstance(raw, Mapping):
            raise InputError(f"{where}: expected an object")
        qid = _text(raw.get("id"), f"{where}.id")
        if not sc.QUESTION_ID.fullmatch(qid) or any(q.id == qid for q in questions):
            raise InputError(f"{where}.id: {qid!r} is not a usable question id (or appears twice)")
        options = raw.get("options") or []
        if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
            raise InputError(f"{where}.options: expected a list of strings")
        context = raw.get("context")
        questions.append(
            Question(
                qid,
                _text(raw.get("question"), f"{where}.question"),
                _text(raw.get("kind", "free-text"), f"{where}.kind"),
                tuple(options),
                None if context is None else _text(context, f"{where}.context"),
            )
        )
    planning = doc.get("implementationPlanning") or {}
    option_ids: tuple[str, ...] = ()
    if isinstance(planning, Mapping) and isinstance(planning.get("implementationOptions"), list):
        option_ids = tuple(
            o["id"] for o in planning["implementationOptions"] if isinstance(o, Mapping) and isinstance(o.get("id"), str)
        )
    try:
        sc.SidecarMeta(header["taskKey"], header["taskType"], number, header["runId"], "x", "x")
    except InputError as exc:
        raise InputError(f"{source}: $.header: {exc.message}") from None
    return ReportRef(
        run, markdown, data_path, header["taskKey"], header["taskType"], number, header["runId"], tuple(questions), option_ids
    )


def read_sidecar(ref: ReportRef) -> sc.Responses | None:
    path = ref.sidecar
    if not path.exists():
        return None
    return sc.parse(fsio.read_text(path, what="sidecar"), ref.run.relative(path))


# ---------------------------------------------------------------- arguments


def parse_answers(text: str, ref: ReportRef) -> list[tuple[str, str]]:
    """`--answers`: {"Q1": "answer"} or [{"questionId": "Q1", "answer": "..."}]."""
    doc = fsio.parse_json(text, "--answers")
    pairs: list[tuple[str, Any]] = []
    if isinstance(doc, Mapping):
        pairs = list(doc.items())
    elif isinstance(doc, list):
        for i, item in enumerate(doc):
            if not isinstance(item, Mapping) or set(item) != {"questionId", "answer"}:
                raise InputError(f'--answers[{i}]: expected {{"questionId": ..., "answer": ...}}')
            pairs.append((item["questionId"], item["answer"]))
    else:
        raise InputError("--answers: expected an object {questionId: answer} or a list of {questionId, answer}")
    known = ", ".join(q.id for q in ref.questions) or "none"
    seen: set[str] = set()
    for qid, answer in pairs:
        if not isinstance(qid, str) or ref.question(qid) is None:
            raise InputError(f"--answers: {qid!r} is not an open question of this report", hint=f"known question ids: {known}")
        if qid in seen:
            raise InputError(f"--answers: {qid} is answered twice")
        seen.add(qid)
        if not isinstance(answer, str):
            raise InputError(f"--answers: the answer to {qid} must be a string")
        question = ref.question(qid)
        assert question is not None
        if question.kind == "choice" and question.options and answer not in question.options:
            raise InputError(
                f"--answers: {answer[:60]!r} is not an option of {qid}", hint=f"options: {' | '.join(question.options)}"
            )
    return pairs


def _block(text: str | None, argument: str, make: Callable[[Any, str], Any]) -> Any:
    if text is None:
        return None
    doc = fsio.parse_json(text, argument)
    try:
        return make(doc, argument)
    except InputError as exc:
        message = exc.message if exc.message.startswith(argument) else f"{argument}: {exc.message}"
        raise InputError(message, hint=exc.hint) from None


def _check_option(option: str | None, ref: ReportRef, argument: str) -> None:
    if option is not None and ref.option_ids and option not in ref.option_ids:
        raise InputError(
            f"{argument}: option {option!r} is not one of the report's options", hint=f"options: {', '.join(ref.option_ids)}"
        )


# ---------------------------------------------------------------- write


@dataclass(frozen=True)
class WriteResult:
    sidecar: str
    report: str
    answered: tuple[str, ...]
    unanswered: tuple[str, ...]
    blocks: tuple[str, ...]
    changed: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "sidecar": self.sidecar,
            "report": self.report,
            "answered": list(self.answered),
            "unanswered": list(self.unanswered),
            "blocks": list(self.blocks),
            "changed": self.changed,
        }


def write(
    root: Path,
    report: str,
    answers: str,
    *,
    plan_decision: str | None = None,
    analysis_review: str | None = None,
    direction_selection: str | None = None,
    report_authoring: str | None = None,
) -> WriteResult:
    """Merge into the report's sidecar under its lock; every argument is checked first."""
    ref = load_report(root, report)
    pairs = parse_answers(answers, ref)
    plan = _block(plan_decision, "--plan-decision", sc.plan_decision_from)
    review = _block(analysis_review, "--analysis-review", sc.analysis_review_from)
    direction = _block(direction_selection, "--direction-selection", sc.direction_selection_from)
    authoring = _block(report_authoring, "--report-authoring", sc.report_authoring_from)
    _check_option(plan.option if plan else None, ref, "--plan-decision")
    _check_option(direction.option_id if direction else None, ref, "--direction-selection")
    path = ref.sidecar
    source_report = ref.run.relative(ref.markdown)
    with fsio.locked(path):
        existing = read_sidecar(ref)
        if existing is None:
            meta = sc.SidecarMeta(ref.task_key, ref.task_type, ref.report_number, ref.run_id, source_report, now_iso("seconds"))
            old_answers: dict[str, sc.Answer] = {}
        else:
            meta = existing.meta
            mine = (ref.task_key, ref.task_type, ref.report_number, ref.run_id)
            theirs = (meta.task_key, meta.task_type, meta.report_number, meta.run_id)
            if mine != theirs:
                raise StateError(
                    f"{ref.run.relative(path)}: its header {theirs} does not match the report {mine}",
                    hint="move the stray sidecar away and write again",
                )
            old_answers = {a.question_id: a for a in existing.answers}
        new = {qid: sc.Answer(qid, ref.question(qid).question, answer) for qid, answer in pairs}  # type: ignore[union-attr]
        merged = {**old_answers, **new}
        ordered = [merged[q.id] for q in ref.questions if q.id in merged]
        ordered += [a for qid, a in merged.items() if ref.question(qid) is None]
        responses = sc.Responses(
            meta,
            tuple(ordered),
            plan or (existing.plan_decision if existing else None),
            review or (existing.analysis_review if existing else None),
            direction or (existing.direction_selection if existing else None),
            authoring or (existing.report_authoring if existing else None),
        )
        text = sc.serialize(responses)
        changed = existing is None or sc.serialize(existing) != text
        if changed:
            fsio.atomic_write(path, text)
    answered = tuple(a.question_id for a in responses.answers)
    return WriteResult(
        ref.run.relative(path),
        source_report,
        answered,
        tuple(q.id for q in ref.questions if q.id not in answered),
        tuple(responses.blocks()),
        changed,
    )


# ---------------------------------------------------------------- show and list


def _block_dict(responses: sc.Responses | None) -> dict[str, Any]:
    if responses is None:
        return {}
    d = responses.to_dict()
    return {k: d[k] for k in ("planDecision", "analysisReview", "directionSelection", "reportAuthoring") if d[k] is not None}


def show(root: Path, report: str) -> dict[str, Any]:
    ref = load_report(root, report)
    responses = read_sidecar(ref)
    answered = {a.question_id: a for a in responses.answers} if responses else {}
    return {
        "report": ref.run.relative(ref.markdown),
        "sidecar": ref.run.relative(ref.sidecar) if responses else None,
        "unanswered": [
            {"id": q.id, "question": q.question, "kind": q.kind, **({"options": list(q.options)} if q.options else {})}
            for q in ref.questions
            if q.id not in answered
        ],
        "answers": [{"questionId": a.question_id, "question": a.question, "answer": a.answer} for a in answered.values()],
        "blocks": responses.blocks() if responses else [],
        "decisions": _block_dict(responses),
    }


def run_of(root: Path, manifest: str | None) -> RunLayout:
    """The run named by `--run-manifest`, else the active run."""
    root, path = locate_run(manifest, root=root)
    loaded = run_manifest.load(path)
    run = for_project(root).run(loaded.run_id)
    if run.manifest != path:
        raise StateError(f"{manifest}: the manifest's runId {loaded.run_id!r} does not match its folder")
    return run


def list_run(root: Path, manifest: str | None) -> dict[str, Any]:
    run = run_of(root, manifest)
    rows: list[dict[str, Any]] = []
    folder = run.responses_dir
    for path in sorted(folder.glob("user-response-*.md")) if folder.is_dir() else []:
        rel = run.relative(path)
        try:
            responses = sc.parse(fsio.read_text(path, what="sidecar"), rel)
        except InputError as exc:
            rows.append({"sidecar": rel, "error": str(exc)})
            continue
        rows.append(
            {
                "sidecar": rel,
                "taskType": responses.meta.task_type,
                "reportNumber": responses.meta.report_number,
                "sourceReport": responses.meta.source_report,
                "createdAt": responses.meta.created_at,
                "answered": [a.question_id for a in responses.answers],
                "blocks": responses.blocks(),
                "decisions": _block_dict(responses),
            }
        )
    return {"runId": run.run_id, "sidecars": rows}


def one_line(text: str, width: int = 80) -> str:
    """Free text for a terminal: escaped like the sidecar (no control characters), cut."""
    shown = sc.quote(text)[1:-1]
    return shown if len(shown) <= width else shown[: width - 1] + "…"
