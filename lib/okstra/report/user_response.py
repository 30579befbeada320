"""Recording and showing the user's responses to a report (DESIGN §9).

`write` merges answers and decision blocks into a report's sidecar under its
lock and writes it atomically; `import_export` does the same for a sidecar the
HTML view exported, after checking it against its report; `show` says which
open questions are still unanswered; `list_run` lists the sidecars of a run.
The format itself lives in `report.sidecar`; paths come from `model.layout`.

Who records is decided here from the environment the command runs in
(`recorder`), never from its input: from inside a Claude Code session or a
worker, decision blocks are refused and answers are marked relayed by the
lead (DESIGN §9).
"""

from __future__ import annotations

import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from okstra.core import fsio, paths, seal
from okstra.core.clock import now_iso
from okstra.core.errors import InputError, RefusedError, StateError
from okstra.model.layout import Run, RunLayout, data_of, for_project, markdown_of, report_stem, run_of_reports_folder
from okstra.report import sidecar as sc

# Set by Claude Code in its Bash-tool and hook subprocesses (ecosystem reference), and by
# worker-run for the provider CLI it starts (core.settings.KNOBS): a command that sees any of
# them runs for the lead or a worker, not in the user's own terminal. Present at all counts,
# even empty: a blanked variable is still not the user's terminal.
AGENT_MARKERS = ("CLAUDECODE", "CLAUDE_CODE_CHILD_SESSION", "OKSTRA_WORKER_ID")
DECISIONS_ARE_THE_USERS = (
    "the user records it from their own terminal (user-response-write --interactive) "
    "or the report's HTML view (Export, then user-response-import in their terminal)"
)


def recorder(env: Mapping[str, str]) -> str:
    """`sidecar.USER`, or `sidecar.RELAYED_BY_LEAD` inside a Claude Code session or a worker."""
    return sc.RELAYED_BY_LEAD if any(name in env for name in AGENT_MARKERS) else sc.USER


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    kind: str
    options: tuple[str, ...] = ()
    context: str | None = None


@dataclass(frozen=True)
class Option:
    id: str
    name: str


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
    options: tuple[Option, ...]
    decisions_required: tuple[str, ...]

    @property
    def option_ids(self) -> tuple[str, ...]:
        return tuple(o.id for o in self.options)

    @property
    def sidecar(self) -> Path:
        return self.run.sidecar(self.task_type, self.report_number)

    def question(self, question_id: str) -> Question | None:
        return next((q for q in self.questions if q.id == question_id), None)


# ---------------------------------------------------------------- the report


# The export object's / report data's key for each decision block (DESIGN §9).
BLOCK_KEYS = {
    "planDecision": sc.PLAN_DECISION,
    "analysisReview": sc.ANALYSIS_REVIEW,
    "directionSelection": sc.DIRECTION_SELECTION,
    "reportAuthoring": sc.REPORT_AUTHORING,
}


# The user-response-write argument of each decision block.
ARGUMENTS = {name: "--" + name.lower().replace(" ", "-") for name in sc.BLOCKS}


def _report_files(root: Path, value: str) -> tuple[RunLayout, Path, Path]:
    path = paths.argument(root, value, source="--report")
    if report_stem(path) is None:
        raise InputError(f"--report: {value!r} is neither a report .md nor its .data.json")
    run = run_of_reports_folder(root, path.parent)
    if run is None:
        raise InputError(
            f"--report: {value!r} is not inside a run's reports folder",
            hint="pass .okstra/runs/<run-id>/reports/<report>.md",
        )
    return run, markdown_of(path), data_of(path)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"{where}: expected a string")
    return value


def load_report(root: Path, value: str) -> ReportRef:
    """The report named by `--report` (its .md or .data.json), read from its data file."""
    run, markdown, data_path = _report_files(root, value)
    source = paths.relative(root, data_path) if data_path.exists() else str(data_path)
    doc = fsio.read_json(data_path, what="report data file")
    header, number = _checked_header(doc, source, run)
    questions = _open_questions(doc, source)
    options = _implementation_options(doc)
    decisions = _decisions_required(doc)
    _check_header_names_a_sidecar(header, number, source)
    return ReportRef(
        run,
        markdown,
        data_path,
        header["taskKey"],
        header["taskType"],
        number,
        header["runId"],
        questions,
        options,
        decisions,
    )


def _checked_header(doc: Any, source: str, run: RunLayout) -> tuple[Mapping[str, Any], int]:
    """The data file's header and report number, refused unless it names this run's report."""
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
    return header, number


def _open_questions(doc: Mapping[str, Any], source: str) -> tuple[Question, ...]:
    """`openQuestions`, each checked: a usable id given once, string options, text fields."""
    raw_questions = doc.get("openQuestions", [])
    if not isinstance(raw_questions, list):
        raise InputError(f"{source}: $.openQuestions: expected a list")
    questions: list[Question] = []
    for i, raw in enumerate(raw_questions):
        questions.append(_open_question(raw, f"{source}: $.openQuestions[{i}]", questions))
    return tuple(questions)


def _open_question(raw: Any, where: str, earlier: list[Question]) -> Question:
    """One open question, its id not used by an `earlier` one."""
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: expected an object")
    qid = _text(raw.get("id"), f"{where}.id")
    if not sc.QUESTION_ID.fullmatch(qid) or any(q.id == qid for q in earlier):
        raise InputError(f"{where}.id: {qid!r} is not a usable question id (or appears twice)")
    options = raw.get("options") or []
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise InputError(f"{where}.options: expected a list of strings")
    context = raw.get("context")
    return Question(
        qid,
        _text(raw.get("question"), f"{where}.question"),
        _text(raw.get("kind", "free-text"), f"{where}.kind"),
        tuple(options),
        None if context is None else _text(context, f"{where}.context"),
    )


def _implementation_options(doc: Mapping[str, Any]) -> tuple[Option, ...]:
    """The plan's options a decision may name; entries without a string id are not options."""
    planning = doc.get("implementationPlanning") or {}
    if not isinstance(planning, Mapping) or not isinstance(planning.get("implementationOptions"), list):
        return ()
    return tuple(
        Option(o["id"], o["name"] if isinstance(o.get("name"), str) else o["id"])
        for o in planning["implementationOptions"]
        if isinstance(o, Mapping) and isinstance(o.get("id"), str)
    )


def _decisions_required(doc: Mapping[str, Any]) -> tuple[str, ...]:
    """The decision blocks the report asks for (`decisionsRequired.<key>: true`)."""
    required = doc.get("decisionsRequired") or {}
    return tuple(name for key, name in BLOCK_KEYS.items() if isinstance(required, Mapping) and required.get(key) is True)


def _check_header_names_a_sidecar(header: Mapping[str, Any], number: int, source: str) -> None:
    """The header's task key, type and run id must be ones a sidecar header can carry."""
    try:
        sc.SidecarMeta(header["taskKey"], header["taskType"], number, header["runId"], "x", "x")
    except InputError as exc:
        raise InputError(f"{source}: $.header: {exc.message}") from None


def plan_sha256(ref: ReportRef) -> str:
    """The sha256 of the report's data file as it is now: what a plan decision binds to."""
    return seal.sha256_hex(fsio.read_bytes(ref.data, what="report data file"))


PLAN_CHANGED_HINT = (
    "ask the user to review the plan and approve it again "
    "(user-response-write --plan-decision in their terminal, or the report's HTML view)"
)


def approved_plan(ref: ReportRef, shown: str) -> sc.PlanDecision:
    """The approved PLAN DECISION of `ref`, refused (RefusedError) unless the user approved it
    and the plan's data is still, byte for byte, what they approved (DESIGN §9): a plan
    changed after approval, or approved before approvals were bound to the data (no
    plan-sha256: what was approved cannot be shown), must be approved again."""
    responses = read_sidecar(ref)
    decision = responses.plan_decision if responses is not None else None
    sidecar = ref.run.relative(ref.sidecar)
    if decision is None or decision.status != "approved":
        state = "has no PLAN DECISION" if decision is None else f"says {decision.status}"
        raise RefusedError(
            f"the plan {shown!r} is not approved: its sidecar {sidecar} {state}",
            hint="the user approves it in the report's HTML view or with user-response-write --plan-decision",
        )
    data = ref.run.relative(ref.data)
    if decision.plan_sha256 is None:
        raise RefusedError(
            f"the plan {shown!r} was approved without binding the approval to its data ({sidecar} has no plan-sha256), "
            f"so okstra cannot show that {data} is what the user approved",
            hint=PLAN_CHANGED_HINT,
        )
    if decision.plan_sha256 != plan_sha256(ref):
        raise RefusedError(
            f"the plan {shown!r} changed after approval: {data} no longer has the sha256 the approval in {sidecar} recorded",
            hint=PLAN_CHANGED_HINT,
        )
    return decision


def read_sidecar(ref: ReportRef) -> sc.Responses | None:
    path = ref.sidecar
    if not path.exists():
        return None
    return sc.read_state(path, ref.run.relative(path))


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
class Decisions:
    """The decision blocks one recording brings (None: left as it was)."""

    plan_decision: sc.PlanDecision | None = None
    analysis_review: sc.AnalysisReview | None = None
    direction_selection: sc.DirectionSelection | None = None
    report_authoring: sc.ReportAuthoring | None = None
    scope_waiver: sc.ScopeWaiver | None = None

    def named(self) -> dict[str, Any]:
        return {
            sc.PLAN_DECISION: self.plan_decision,
            sc.ANALYSIS_REVIEW: self.analysis_review,
            sc.DIRECTION_SELECTION: self.direction_selection,
            sc.REPORT_AUTHORING: self.report_authoring,
            sc.SCOPE_WAIVER: self.scope_waiver,
        }

    def given(self) -> list[str]:
        return [name for name, block in self.named().items() if block is not None]


@dataclass(frozen=True)
class WriteResult:
    sidecar: str
    report: str
    answered: tuple[str, ...]
    unanswered: tuple[str, ...]
    blocks: tuple[str, ...]
    changed: bool
    changes: tuple[str, ...] = ()
    recorded_by: str = sc.USER

    def to_dict(self) -> dict[str, Any]:
        return {
            "sidecar": self.sidecar,
            "report": self.report,
            "answered": list(self.answered),
            "unanswered": list(self.unanswered),
            "blocks": list(self.blocks),
            "changed": self.changed,
            "changes": list(self.changes),
            "recordedBy": self.recorded_by,
        }


def refuse_agent_decisions(decisions: Decisions, recorded_by: str) -> None:
    """Decision blocks are the user's alone (DESIGN §9): refused from the lead or a worker."""
    given = decisions.given()
    if given and recorded_by != sc.USER:
        raise RefusedError(
            f"{given[0]} is the user's decision and is not recorded from inside a Claude Code session or a worker",
            hint=DECISIONS_ARE_THE_USERS,
        )


def check_decisions(ref: ReportRef, decisions: Decisions, where: Callable[[str], str]) -> None:
    """Options named by the decisions must be the report's (`where(block)` labels the refusal)."""
    if decisions.plan_decision is not None:
        _check_option(decisions.plan_decision.option, ref, where(sc.PLAN_DECISION))
    if decisions.direction_selection is not None:
        _check_option(decisions.direction_selection.option_id, ref, where(sc.DIRECTION_SELECTION))


def write(
    root: Path,
    report: str,
    answers: str,
    *,
    plan_decision: str | None = None,
    analysis_review: str | None = None,
    direction_selection: str | None = None,
    report_authoring: str | None = None,
    scope_waiver: str | None = None,
    recorded_by: str = sc.USER,
) -> WriteResult:
    """Merge into the report's sidecar under its lock; every argument is checked first."""
    ref = load_report(root, report)
    decisions = Decisions(
        _block(plan_decision, "--plan-decision", lambda doc, where: sc.plan_decision_from(doc, where, bound=False)),
        _block(analysis_review, "--analysis-review", sc.analysis_review_from),
        _block(direction_selection, "--direction-selection", sc.direction_selection_from),
        _block(report_authoring, "--report-authoring", sc.report_authoring_from),
        _block(scope_waiver, "--scope-waiver", sc.scope_waiver_from),
    )
    pairs = parse_answers(answers, ref)
    refuse_agent_decisions(decisions, recorded_by)
    check_decisions(ref, decisions, lambda block: ARGUMENTS[block])
    return record(ref, pairs, decisions, recorded_by)


def _changes(old: sc.Responses | None, new: sc.Responses) -> list[str]:
    before = {a.question_id: a for a in old.answers} if old else {}
    lines = []
    for a in new.answers:
        was = before.get(a.question_id)
        by = f" ({recorded_by_text(a.recorded_by)})" if a.relayed else ""
        if was is None:
            lines.append(f"{a.question_id}: answered{by}")
        elif was != a:
            lines.append(f"{a.question_id}: answer changed{by}")
    old_blocks = old.to_dict() if old else {}
    new_blocks = new.to_dict()
    for key, name in BLOCK_KEYS.items():
        if new_blocks[key] is not None and new_blocks[key] != old_blocks.get(key):
            lines.append(f"{name}: {'replaced' if old_blocks.get(key) else 'recorded'}")
    return lines


def record(
    ref: ReportRef,
    pairs: list[tuple[str, str]],
    decisions: Decisions,
    recorded_by: str,
    *,
    created_at: str | None = None,
) -> WriteResult:
    """Merge answers and blocks (checked against `ref` by the caller) into the sidecar, under
    its lock, written atomically.

    An answer given again with the same text keeps the entry it had (and who recorded it);
    a new or changed one is marked `recorded_by`. A block given replaces the one there.
    `created_at` is the creation time when there is no sidecar yet (default: now).
    """
    refuse_agent_decisions(decisions, recorded_by)
    path = ref.sidecar
    source_report = ref.run.relative(ref.markdown)
    with fsio.locked(path):
        decisions = _bound_to_the_plan_now(ref, decisions)
        existing = read_sidecar(ref)
        meta = _sidecar_meta(ref, existing, source_report, created_at)
        responses = _with_blocks(meta, _merged_answers(ref, existing, pairs, recorded_by), decisions, existing)
        changed = _write_if_changed(path, existing, responses)
    answered = tuple(a.question_id for a in responses.answers)
    return WriteResult(
        ref.run.relative(path),
        source_report,
        answered,
        tuple(q.id for q in ref.questions if q.id not in answered),
        tuple(responses.blocks()),
        changed,
        tuple(_changes(existing, responses)),
        recorded_by,
    )


def _bound_to_the_plan_now(ref: ReportRef, decisions: Decisions) -> Decisions:
    """A plan decision without `plan-sha256` was typed at the terminal: it is about the plan
    as it is now, so it binds to the data's sha256 read under the sidecar's lock (DESIGN §9)."""
    if decisions.plan_decision is None or decisions.plan_decision.plan_sha256 is not None:
        return decisions
    bound = replace(decisions.plan_decision, plan_sha256=plan_sha256(ref))
    return replace(decisions, plan_decision=bound)


def _sidecar_meta(ref: ReportRef, existing: sc.Responses | None, source_report: str, created_at: str | None) -> sc.SidecarMeta:
    """The header a new sidecar gets, or the existing one's, refused when it is another report's."""
    if existing is None:
        return sc.SidecarMeta(
            ref.task_key, ref.task_type, ref.report_number, ref.run_id, source_report, created_at or now_iso("seconds")
        )
    meta = existing.meta
    mine = (ref.task_key, ref.task_type, ref.report_number, ref.run_id)
    theirs = (meta.task_key, meta.task_type, meta.report_number, meta.run_id)
    if mine != theirs:
        raise StateError(
            f"{ref.run.relative(ref.sidecar)}: its header {theirs} does not match the report {mine}",
            hint="move the stray sidecar away and write again",
        )
    return meta


def _merged_answers(
    ref: ReportRef, existing: sc.Responses | None, pairs: list[tuple[str, str]], recorded_by: str
) -> tuple[sc.Answer, ...]:
    """Old and new answers in the report's question order (answers to questions the report no
    longer asks last); an answer given again unchanged keeps its entry and who recorded it."""
    old_answers = {a.question_id: a for a in existing.answers} if existing is not None else {}
    new: dict[str, sc.Answer] = {}
    for qid, text in pairs:
        question = ref.question(qid)
        assert question is not None  # parse_answers / check_against_report checked it
        kept = old_answers.get(qid)
        same = kept is not None and kept.answer == text and kept.question == question.question
        new[qid] = kept if same and kept is not None else sc.Answer(qid, question.question, text, recorded_by)
    merged = {**old_answers, **new}
    ordered = [merged[q.id] for q in ref.questions if q.id in merged]
    ordered += [a for qid, a in merged.items() if ref.question(qid) is None]
    return tuple(ordered)


def _with_blocks(
    meta: sc.SidecarMeta, answers: tuple[sc.Answer, ...], decisions: Decisions, existing: sc.Responses | None
) -> sc.Responses:
    """The sidecar's new content: each decision block given replaces the one there, the rest stay."""
    return sc.Responses(
        meta,
        answers,
        decisions.plan_decision or (existing.plan_decision if existing else None),
        decisions.analysis_review or (existing.analysis_review if existing else None),
        decisions.direction_selection or (existing.direction_selection if existing else None),
        decisions.report_authoring or (existing.report_authoring if existing else None),
        decisions.scope_waiver or (existing.scope_waiver if existing else None),
    )


def _write_if_changed(path: Path, existing: sc.Responses | None, responses: sc.Responses) -> bool:
    """Write the sealed sidecar atomically unless its text would stay the same; True when written."""
    text = sc.serialize(responses)
    changed = existing is None or sc.serialize(existing) != text
    if changed:
        fsio.atomic_write(path, seal.seal_text(text))
    return changed


# ---------------------------------------------------------------- import

# An exported sidecar larger than this is not one the HTML view wrote (DESIGN §14).
MAX_EXPORT_BYTES = 1 << 20
_EXPORT_NAME = re.compile(r"user-response-[a-z][a-z0-9-]*-[0-9]{3,}(?: ?\([0-9]+\))?\.md")


def read_export(path: Path, shown: str) -> str:
    """The text of an exported sidecar: a regular file, at most 1 MiB, UTF-8."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InputError(f"{shown}: no such file", hint="check the path (the HTML view's Export downloads it)") from None
    except OSError as exc:
        raise InputError(f"{shown}: cannot read: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{shown}: not a regular file")
    if info.st_size > MAX_EXPORT_BYTES:
        raise InputError(
            f"{shown}: {info.st_size:,} bytes; an exported sidecar is at most {MAX_EXPORT_BYTES:,}",
            hint="import the file the HTML view's Export downloaded",
        )
    with open(path, "rb") as handle:
        raw = handle.read(MAX_EXPORT_BYTES + 1)
    if len(raw) > MAX_EXPORT_BYTES:
        raise InputError(f"{shown}: more than {MAX_EXPORT_BYTES:,} bytes; an exported sidecar is at most that")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"{shown}:{line}: not UTF-8 text") from None


def _line_of(text: str, start: str, after: int = 0) -> int:
    """The 1-based number of the first line from line `after` on that starts with `start`."""
    for number, line in enumerate(text.split("\n"), start=1):
        if number > after and line.removesuffix("\r").startswith(start):
            return number
    return after or 1


def check_against_report(ref: ReportRef, responses: sc.Responses, text: str, shown: str) -> list[tuple[str, str]]:
    """Refuse an export that is not for this report or names what it does not ask; its answers."""

    def refuse(line: int, message: str, hint: str | None = None) -> InputError:
        return InputError(
            f"{shown}:{line}: {message}", hint=hint or f"export it again from {ref.run.relative(ref.markdown)}'s view"
        )

    m = responses.meta
    for field, got, want in (
        ("task-key", m.task_key, ref.task_key),
        ("task-type", m.task_type, ref.task_type),
        ("report-number", m.report_number, ref.report_number),
        ("run-id", m.run_id, ref.run_id),
        ("source-report", m.source_report, ref.run.relative(ref.markdown)),
    ):
        if got != want:
            raise refuse(
                _line_of(text, f"- {field}:"), f"{field} {got!r} is not this report's ({want!r}): another report's export"
            )
    pairs: list[tuple[str, str]] = []
    known = ", ".join(q.id for q in ref.questions) or "none"
    for a in responses.answers:
        heading = _line_of(text, f"### {a.question_id}")
        question = ref.question(a.question_id)
        if question is None:
            raise refuse(heading, f"question {a.question_id} is not an open question of this report (known: {known})")
        if a.question != question.question:
            raise refuse(
                _line_of(text, "- question:", heading),
                f"the text of question {a.question_id} differs from the report's (edited?)",
            )
        if question.kind == "choice" and question.options and a.answer not in question.options:
            raise refuse(
                _line_of(text, "- answer:", heading),
                f"{a.answer[:60]!r} is not an option of {a.question_id}",
                hint=f"options: {' | '.join(question.options)}",
            )
        pairs.append((a.question_id, a.answer))
    decisions = decisions_of(responses)
    for name in decisions.given():
        if name not in ref.decisions_required:
            raise refuse(_line_of(text, f"## {name}"), f"the report does not ask for a {name}")
    try:
        check_decisions(ref, decisions, lambda block: block)
    except InputError as exc:
        block = exc.message.split(":", 1)[0]
        raise refuse(_line_of(text, "- option", _line_of(text, f"## {block}")), exc.message, exc.hint) from None
    plan = decisions.plan_decision
    if plan is not None and plan.plan_sha256 != plan_sha256(ref):
        where = _line_of(text, f"## {sc.PLAN_DECISION}")
        if plan.plan_sha256 is None:
            raise refuse(where, "the PLAN DECISION does not name the plan data it decides (no plan-sha256)")
        raise refuse(
            _line_of(text, "- plan-sha256:", where),
            f"the plan changed after this page was rendered: {ref.run.relative(ref.data)} no longer has the "
            "sha256 the PLAN DECISION names",
            hint=f"render the view again (render-report-views {ref.run.relative(ref.markdown)}) and decide on the plan as it is now",
        )
    return pairs


def scope_waivers(root: Path, task_key: str, stage: int) -> list[tuple[str, sc.ScopeWaiver]]:
    """Every SCOPE WAIVER the user recorded for `stage` of `task_key`, in any of the task's
    sidecars (normally the approved plan's), with the sidecar it is in (DESIGN §10)."""
    from okstra.model.layout import TaskKey

    key = TaskKey.parse(task_key)
    project = for_project(root)
    found = []
    runs = project.okstra_dir / "runs"
    for folder in sorted(runs.glob(f"{key.group}--{key.task_id}--r*")) if runs.is_dir() else ():
        for path in sorted(project.run(folder.name).responses_dir.glob("user-response-*.md")):
            shown = paths.relative(root, path)
            waiver = sc.read_state(path, shown).scope_waiver
            if waiver is not None and waiver.stage == stage:
                found.append((shown, waiver))
    return found


def decisions_of(responses: sc.Responses) -> Decisions:
    return Decisions(
        responses.plan_decision,
        responses.analysis_review,
        responses.direction_selection,
        responses.report_authoring,
        responses.scope_waiver,
    )


def import_export(root: Path, file: Path, shown: str, report: str | None, recorded_by: str) -> WriteResult:
    """Check an exported sidecar against its report, then merge it like `write` (DESIGN §9).

    The report is `report` when given, else the export's own source-report. Nothing is
    written unless every check passes. Who recorded is `recorded_by`, never the file's marks.
    """
    text = read_export(file, shown)
    responses = sc.parse(text, shown)
    if report is None:
        source = paths.resolve_inside(root, responses.meta.source_report, source=f"{shown}: source-report")
        report = paths.relative(root, source)
    ref = load_report(root, report)
    pairs = check_against_report(ref, responses, text, shown)
    decisions = decisions_of(responses)
    refuse_agent_decisions(decisions, recorded_by)
    return record(ref, pairs, decisions, recorded_by, created_at=responses.meta.created_at)


def download_folders(env: Mapping[str, str]) -> list[Path]:
    """The usual download folders: $XDG_DOWNLOAD_DIR, then ~/Downloads."""
    folders = []
    if env.get("XDG_DOWNLOAD_DIR"):
        folders.append(Path(env["XDG_DOWNLOAD_DIR"]).expanduser())
    if env.get("HOME"):
        folders.append(Path(env["HOME"]) / "Downloads")
    return folders


def newest_export(folders: list[Path], name: str | None) -> Path:
    """The newest exported sidecar in `folders` (named `name`, or a browser's `name (1).md` copy)."""
    stem = name.removesuffix(".md") if name else None
    found: list[tuple[float, str, Path]] = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in folder.iterdir():
            if not _EXPORT_NAME.fullmatch(path.name) or not path.is_file():
                continue
            if stem is not None and re.sub(r" ?\([0-9]+\)\.md$", ".md", path.name) != f"{stem}.md":
                continue
            found.append((path.stat().st_mtime, path.name, path))
    if not found:
        where = ", ".join(str(f) for f in folders) or "no download folder (HOME and XDG_DOWNLOAD_DIR unset)"
        raise InputError(
            f"--from-downloads: no {name or 'user-response-*.md'} in {where}",
            hint="press Export in the report's HTML view first, or pass the file's path",
        )
    return max(found)[2]


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
        "answers": [
            {"questionId": a.question_id, "question": a.question, "answer": a.answer, "recordedBy": a.recorded_by}
            for a in answered.values()
        ],
        "blocks": responses.blocks() if responses else [],
        "decisions": _block_dict(responses),
    }


def list_run(handle: Run) -> dict[str, Any]:
    """The sidecars of a run and the blocks each holds."""
    run = handle.layout
    rows: list[dict[str, Any]] = []
    folder = run.responses_dir
    for path in sorted(folder.glob("user-response-*.md")) if folder.is_dir() else []:
        rel = run.relative(path)
        try:
            responses = sc.read_state(path, rel)
        except (InputError, StateError) as exc:
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


def recorded_by_text(recorded_by: str) -> str:
    """How a view or a terminal says who recorded an answer."""
    return "relayed by the lead" if recorded_by == sc.RELAYED_BY_LEAD else "the user"


def one_line(text: str, width: int = 80) -> str:
    """Free text for a terminal: escaped like the sidecar (no control characters), cut."""
    shown = sc.quote(text)[1:-1]
    return shown if len(shown) <= width else shown[: width - 1] + "…"
