"""The user-response sidecar (DESIGN §9): the one serializer and the one parser.

The sidecar is the only place the user's decisions live. Its format is
documented in `docs/user-response-format.md`; this module is its one
definition. `templates/views/sidecar.js` is the browser twin of `serialize`
and must produce the same bytes for the same values (tests check it).

Every string value is written as a quoted literal on one line (see `quote`),
so no value can forge a heading, a field or a line; headings and field names
come only from this module.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from okstra.core import seal
from okstra.core.errors import InputError

FORMAT_LINE = "<!-- okstra user-response 1.1; format: docs/user-response-format.md -->"

PLAN_STATUSES = ("approved", "revision-requested", "rejected")
REVIEW_STATUSES = ("accepted", "changes-requested")
AUTHORING_STATUSES = ("approved", "denied")
# Who recorded an answer. The recording command decides it from where it runs, never
# from its input: an answer recorded from inside the lead's Claude Code session or a
# worker is `relayed-by-lead`; from the user's own terminal or the HTML view, `user`.
USER = "user"
RELAYED_BY_LEAD = "relayed-by-lead"
RECORDERS = (USER, RELAYED_BY_LEAD)

ANSWERS = "ANSWERS"
PLAN_DECISION = "PLAN DECISION"
ANALYSIS_REVIEW = "ANALYSIS REVIEW"
DIRECTION_SELECTION = "DIRECTION SELECTION"
REPORT_AUTHORING = "REPORT AUTHORING"
# The user lets a stage be recorded done although stage-check found these paths out of
# its approved scope (DESIGN §10); recorded in the approved plan's sidecar.
SCOPE_WAIVER = "SCOPE WAIVER"
BLOCKS = (PLAN_DECISION, ANALYSIS_REVIEW, DIRECTION_SELECTION, REPORT_AUTHORING, SCOPE_WAIVER)

# Identifiers are checked with fullmatch (a trailing newline never slips through).
_TASK_KEY = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}/[a-z0-9][a-z0-9._-]{0,63}")
_TASK_TYPE = re.compile(r"[a-z][a-z0-9-]{0,63}")
_RUN_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,199}(\.[a-z0-9_-]+)*")
QUESTION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
OPTION_ID = re.compile(r"[A-Z][A-Z0-9-]{0,15}")
SHA256 = re.compile(r"[0-9a-f]{64}")
_ASCII_SPACE = " \t\n\r\f\v"
_SPACE_RUN = re.compile(r"[ \t\n\r\f\v]+")
_ID_SEPARATORS = re.compile(r"[ \t\n\r\f\v_]+")


# ---------------------------------------------------------------- quoting


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if ch == '"':
        return '\\"'
    if ch == "\\":
        return "\\\\"
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    if ch == "\t":
        return "\\t"
    if code < 0x20 or 0x7F <= code <= 0x9F or code in (0x2028, 0x2029) or 0xD800 <= code <= 0xDFFF:
        return f"\\u{code:04x}"
    return ch


_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]')


def quote(value: str) -> str:
    """A one-line JSON string literal with okstra's fixed escaping (same in sidecar.js).

    Escaped: `"` and `\\`; newline, carriage return and tab as `\\n \\r \\t`;
    every other C0 control, DEL, C1 control, U+2028, U+2029 and every surrogate
    code point as `\\uXXXX` (lower-case hex). Everything else is written as is.
    """
    return '"' + _NEEDS_ESCAPE.sub(lambda m: _escape_char(m.group(0)), value) + '"'


_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def unquote(literal: str) -> str:
    """Read back a literal written by `quote` (any JSON string literal is accepted;
    `\\uXXXX` escapes are read one code unit at a time, so the round trip is exact)."""
    if len(literal) < 2 or literal[0] != '"' or literal[-1] != '"':
        raise ValueError("expected a quoted string")
    out: list[str] = []
    i, end = 1, len(literal) - 1
    while i < end:
        ch = literal[i]
        if ch == "\\":
            if i + 1 >= end:
                raise ValueError("the string ends inside an escape")
            nxt = literal[i + 1]
            if nxt == "u":
                digits = literal[i + 2 : i + 6]
                if len(digits) != 4 or not all(c in "0123456789abcdefABCDEF" for c in digits):
                    raise ValueError(f"bad escape \\u{digits} at character {i}")
                out.append(chr(int(digits, 16)))
                i += 6
                continue
            if nxt not in _SIMPLE_ESCAPES:
                raise ValueError(f"bad escape \\{nxt} at character {i}")
            out.append(_SIMPLE_ESCAPES[nxt])
            i += 2
            continue
        if ch == '"':
            raise ValueError(f"unescaped quote at character {i}")
        if ord(ch) < 0x20:
            raise ValueError(f"raw control character at character {i}")
        out.append(ch)
        i += 1
    return "".join(out)


# ---------------------------------------------------------------- normalising


def normalise_option_id(value: str) -> str:
    """Implementation/direction option ids: trim ASCII whitespace, turn runs of ASCII
    whitespace or `_` into one `-`, upper-case ASCII letters (" opt 2 " -> "OPT-2").
    The result must match `[A-Z][A-Z0-9-]{0,15}` (checked by the records)."""
    text = _ID_SEPARATORS.sub("-", value.strip(_ASCII_SPACE))
    return "".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in text)


def normalise_name(value: str) -> str:
    """Option names: trim ASCII whitespace and collapse inner runs of it to one space."""
    return _SPACE_RUN.sub(" ", value.strip(_ASCII_SPACE))


# ---------------------------------------------------------------- records


def _need_str(value: Any, field: str, *, nonblank: bool = False, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise InputError(f"{field}: expected a string, got {type(value).__name__}")
    if nonblank and not value.strip(_ASCII_SPACE):
        raise InputError(f"{field}: must not be empty")


def _need_match(value: Any, pattern: re.Pattern[str], field: str, example: str) -> None:
    _need_str(value, field)
    if not pattern.fullmatch(value):
        raise InputError(f"{field}: {value!r} is not valid", hint=f"expected e.g. {example}")


def _need_status(value: Any, allowed: tuple[str, ...], field: str) -> None:
    _need_str(value, field)
    if value not in allowed:
        raise InputError(f"{field}: {value!r} is not one of {', '.join(allowed)}")


def _set(obj: Any, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)


@dataclass(frozen=True)
class SidecarMeta:
    task_key: str
    task_type: str
    report_number: int
    run_id: str
    source_report: str
    created_at: str

    def __post_init__(self) -> None:
        _need_match(self.task_key, _TASK_KEY, "task-key", "feature/rate-limit")
        _need_match(self.task_type, _TASK_TYPE, "task-type", "implementation-planning")
        if type(self.report_number) is not int or not 1 <= self.report_number <= 999_999:
            raise InputError(f"report-number: {self.report_number!r} is not a whole number from 1")
        _need_match(self.run_id, _RUN_ID, "run-id", "feature--rate-limit--r001")
        _need_str(self.source_report, "source-report", nonblank=True)
        _need_str(self.created_at, "created-at", nonblank=True)

    @property
    def title(self) -> str:
        return f"# User response: {self.task_type} report {self.report_number:03d}"


@dataclass(frozen=True)
class Answer:
    question_id: str
    question: str
    answer: str
    recorded_by: str

    def __post_init__(self) -> None:
        _need_match(self.question_id, QUESTION_ID, "question id", "Q1")
        _need_str(self.question, f"{self.question_id}: question")
        _need_str(self.answer, f"{self.question_id}: answer")
        _need_status(self.recorded_by, RECORDERS, f"{self.question_id}: recorded-by")

    @property
    def relayed(self) -> bool:
        return self.recorded_by == RELAYED_BY_LEAD


@dataclass(frozen=True)
class PlanDecision:
    """The user's decision on an implementation plan. `plan_sha256` binds it to the plan's
    data file as it was when the user decided (DESIGN §9): the recording command sets it,
    and render-bundle --stage refuses a plan whose data no longer has it."""

    status: str
    option: str | None = None
    reason: str | None = None
    plan_sha256: str | None = None

    def __post_init__(self) -> None:
        _need_status(self.status, PLAN_STATUSES, "plan decision status")
        if self.option is not None:
            _need_str(self.option, "plan decision option")
            _set(self, "option", normalise_option_id(self.option))
            _need_match(self.option, OPTION_ID, "plan decision option", "B or OPT-2")
        if self.status == "approved" and self.option is None:
            raise InputError("plan decision option: an approved plan must name the option it approves")
        _need_str(self.reason, "plan decision reason", optional=True)
        if self.status != "approved" and (self.reason is None or not self.reason.strip(_ASCII_SPACE)):
            raise InputError(f"plan decision reason: required when the status is {self.status}")
        if self.plan_sha256 is not None:
            _need_match(self.plan_sha256, SHA256, "plan decision plan-sha256", "64 lower-case hex digits")


@dataclass(frozen=True)
class AnalysisReview:
    status: str
    notes: str | None = None

    def __post_init__(self) -> None:
        _need_status(self.status, REVIEW_STATUSES, "analysis review status")
        _need_str(self.notes, "analysis review notes", optional=True)
        if self.status == "changes-requested" and (self.notes is None or not self.notes.strip(_ASCII_SPACE)):
            raise InputError("analysis review notes: required when the status is changes-requested")


@dataclass(frozen=True)
class DirectionSelection:
    option_id: str
    option_name: str
    notes: str | None = None

    def __post_init__(self) -> None:
        _need_str(self.option_id, "direction selection option id")
        _set(self, "option_id", normalise_option_id(self.option_id))
        _need_match(self.option_id, OPTION_ID, "direction selection option id", "B or OPT-2")
        _need_str(self.option_name, "direction selection option name", nonblank=True)
        _set(self, "option_name", normalise_name(self.option_name))
        _need_str(self.notes, "direction selection notes", optional=True)


@dataclass(frozen=True)
class ReportAuthoring:
    status: str
    reason: str

    def __post_init__(self) -> None:
        _need_status(self.status, AUTHORING_STATUSES, "report authoring status")
        _need_str(self.reason, "report authoring reason", nonblank=True)


@dataclass(frozen=True)
class ScopeWaiver:
    stage: int
    paths: tuple[str, ...]
    reason: str

    def __post_init__(self) -> None:
        if type(self.stage) is not int or self.stage < 1:
            raise InputError(f"scope waiver stage: {self.stage!r} is not a stage number")
        if isinstance(self.paths, str) or not all(isinstance(p, str) and p.strip() and "\n" not in p for p in self.paths):
            raise InputError("scope waiver paths: expected a list of project-relative paths")
        _set(self, "paths", tuple(p.strip() for p in self.paths))
        if not self.paths:
            raise InputError("scope waiver paths: name at least one path it lets through")
        _need_str(self.reason, "scope waiver reason", nonblank=True)


@dataclass(frozen=True)
class Responses:
    meta: SidecarMeta
    answers: tuple[Answer, ...] = ()
    plan_decision: PlanDecision | None = None
    analysis_review: AnalysisReview | None = None
    direction_selection: DirectionSelection | None = None
    report_authoring: ReportAuthoring | None = None
    scope_waiver: ScopeWaiver | None = None

    def __post_init__(self) -> None:
        _set(self, "answers", tuple(self.answers))
        seen: set[str] = set()
        for answer in self.answers:
            if answer.question_id in seen:
                raise InputError(f"question id {answer.question_id!r} is answered twice")
            seen.add(answer.question_id)

    def answer(self, question_id: str) -> Answer | None:
        return next((a for a in self.answers if a.question_id == question_id), None)

    def blocks(self) -> list[str]:
        """The block headings this sidecar holds, in file order (ANSWERS always)."""
        present = {
            PLAN_DECISION: self.plan_decision,
            ANALYSIS_REVIEW: self.analysis_review,
            DIRECTION_SELECTION: self.direction_selection,
            REPORT_AUTHORING: self.report_authoring,
            SCOPE_WAIVER: self.scope_waiver,
        }
        return [ANSWERS] + [name for name in BLOCKS if present[name] is not None]

    def to_dict(self) -> dict[str, Any]:
        """The export-object shape (camelCase), the same one sidecar.js takes."""
        m = self.meta
        pd, ar, ds, ra = self.plan_decision, self.analysis_review, self.direction_selection, self.report_authoring
        waiver = self.scope_waiver
        extra = (
            {}
            if waiver is None
            else {"scopeWaiver": {"stage": waiver.stage, "paths": list(waiver.paths), "reason": waiver.reason}}
        )
        return {
            "meta": {
                "taskKey": m.task_key,
                "taskType": m.task_type,
                "reportNumber": m.report_number,
                "runId": m.run_id,
                "sourceReport": m.source_report,
                "createdAt": m.created_at,
            },
            "answers": [
                {"questionId": a.question_id, "question": a.question, "answer": a.answer, "recordedBy": a.recorded_by}
                for a in self.answers
            ],
            "planDecision": None if pd is None else _plan_dict(pd),
            "analysisReview": None if ar is None else {"status": ar.status, "notes": ar.notes},
            "directionSelection": None
            if ds is None
            else {"optionId": ds.option_id, "optionName": ds.option_name, "notes": ds.notes},
            "reportAuthoring": None if ra is None else {"status": ra.status, "reason": ra.reason},
            **extra,
        }


def _plan_dict(pd: PlanDecision) -> dict[str, Any]:
    extra = {} if pd.plan_sha256 is None else {"planSha256": pd.plan_sha256}
    return {"status": pd.status, "option": pd.option, "reason": pd.reason, **extra}


# ---------------------------------------------------------------- serializer

# Field names per block, in file order. The serializer writes exactly these; the
# parser expects exactly these.
_META_FIELDS = ("task-key", "task-type", "report-number", "run-id", "source-report", "created-at")
_ANSWER_FIELDS = ("question", "answer", "recorded-by")
_BLOCK_FIELDS = {
    PLAN_DECISION: ("status", "option", "reason"),
    ANALYSIS_REVIEW: ("status", "notes"),
    DIRECTION_SELECTION: ("option-id", "option-name", "notes"),
    REPORT_AUTHORING: ("status", "reason"),
    SCOPE_WAIVER: ("stage", "paths", "reason"),
}
# A field written after a block's fields only when it has a value (so a sidecar written
# before it existed reads back, and re-serializes, unchanged).
_TRAILING_FIELD = {PLAN_DECISION: "plan-sha256"}


def _value(value: str | int | None) -> str:
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    return quote(value)


def _fields(pairs: list[tuple[str, str | int | None]]) -> list[str]:
    return [f"- {name}: {_value(value)}" for name, value in pairs]


def _block_values(responses: Responses, name: str) -> list[str | None] | None:
    if name == PLAN_DECISION and (pd := responses.plan_decision) is not None:
        return [pd.status, pd.option, pd.reason] + ([pd.plan_sha256] if pd.plan_sha256 is not None else [])
    if name == ANALYSIS_REVIEW and (ar := responses.analysis_review) is not None:
        return [ar.status, ar.notes]
    if name == DIRECTION_SELECTION and (ds := responses.direction_selection) is not None:
        return [ds.option_id, ds.option_name, ds.notes]
    if name == REPORT_AUTHORING and (ra := responses.report_authoring) is not None:
        return [ra.status, ra.reason]
    if name == SCOPE_WAIVER and (sw := responses.scope_waiver) is not None:
        return [sw.stage, "\n".join(sw.paths), sw.reason]
    return None


def serialize(responses: Responses) -> str:
    """The canonical sidecar text. Blocks are separated by one blank line; the text
    ends with one newline. `templates/views/sidecar.js` writes the same bytes."""
    m = responses.meta
    lines = [m.title, "", FORMAT_LINE, ""]
    lines += _fields(
        list(zip(_META_FIELDS, (m.task_key, m.task_type, m.report_number, m.run_id, m.source_report, m.created_at), strict=True))
    )
    lines += ["", f"## {ANSWERS}"]
    for a in responses.answers:
        lines += ["", f"### {a.question_id}", ""]
        lines += _fields([("question", a.question), ("answer", a.answer), ("recorded-by", a.recorded_by)])
    for name in BLOCKS:
        values = _block_values(responses, name)
        if values is not None:
            lines += ["", f"## {name}", ""]
            names = _BLOCK_FIELDS[name] + ((_TRAILING_FIELD[name],) if len(values) > len(_BLOCK_FIELDS[name]) else ())
            lines += _fields(list(zip(names, values, strict=True)))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- parser

_FIELD = re.compile(r"^- ([a-z][a-z0-9-]*): (.*)$")


class _Lines:
    """Non-blank lines with their 1-based numbers; blank lines are only separators."""

    def __init__(self, text: str, source: str) -> None:
        self.source = source
        raw = text.split("\n")
        self.items = [(i + 1, line.removesuffix("\r")) for i, line in enumerate(raw)]
        self.items = [(n, line) for n, line in self.items if line.strip(_ASCII_SPACE)]
        self.pos = 0
        self.last = len(raw)

    def peek(self) -> tuple[int, str] | None:
        return self.items[self.pos] if self.pos < len(self.items) else None

    def take(self, what: str) -> tuple[int, str]:
        item = self.peek()
        if item is None:
            raise self.error(self.last, f"the file ends where {what} was expected")
        self.pos += 1
        return item

    def error(self, lineno: int, message: str) -> InputError:
        return InputError(
            f"{self.source}:{lineno}: {message}",
            hint="see docs/user-response-format.md (write sidecars with user-response-write)",
        )


def _read_fields(lines: _Lines, names: tuple[str, ...], where: str) -> tuple[dict[str, Any], dict[str, int]]:
    values: dict[str, Any] = {}
    numbers: dict[str, int] = {}
    for name in names:
        lineno, line = lines.take(f"the field '{name}' of {where}")
        match = _FIELD.match(line)
        if not match:
            raise lines.error(lineno, f"expected the field '- {name}: ...' of {where}, found {line[:60]!r}")
        if match.group(1) != name:
            raise lines.error(lineno, f"expected the field '{name}' of {where}, found '{match.group(1)}'")
        raw = match.group(2)
        if raw == "null":
            value: Any = None
        elif re.fullmatch(r"[1-9][0-9]{0,5}", raw):
            value = int(raw)
        else:
            try:
                value = unquote(raw)
            except ValueError as exc:
                raise lines.error(lineno, f"the value of '{name}' is not a quoted string: {exc}") from None
        values[name] = value
        numbers[name] = lineno
    return values, numbers


def _build(lines: _Lines, lineno: int, numbers: dict[str, int], make: Any, *args: Any) -> Any:
    """Build a record; its refusal names the line of the field it is about (else `lineno`)."""
    try:
        return make(*args)
    except InputError as exc:
        labels = exc.message.split(": ")[:2]
        for name, number in numbers.items():
            if any(label.endswith(name) or label.endswith(name.replace("-", " ")) for label in labels):
                lineno = number
        raise lines.error(lineno, exc.message) from None
    except TypeError as exc:
        raise lines.error(lineno, f"a value has the wrong type: {exc}") from None


def parse(text: str, source: str) -> Responses:
    """Read a sidecar; every error names `source` and the line (InputError, exit 2). A
    trailing okstra seal line is checked and left out (`core.seal`); whether one must be
    there is the reader's call (`user_response.read_sidecar_file`: a run's sidecar must)."""
    lines = _Lines(seal.open_text(text, source, required=False), source)
    lineno, title = lines.take("the title")
    if not title.startswith("# User response: "):
        raise lines.error(lineno, "expected the title '# User response: <task-type> report <NNN>'")
    title_line = lineno
    lineno, fmt = lines.take("the format line")
    if fmt != FORMAT_LINE:
        raise lines.error(lineno, f"expected the format line {FORMAT_LINE!r}")
    values, numbers = _read_fields(lines, _META_FIELDS, "the header")
    meta = _build(lines, numbers["task-key"], numbers, SidecarMeta, *(values[name] for name in _META_FIELDS))
    if title != meta.title:
        raise lines.error(title_line, f"the title does not match the header: expected {meta.title!r}")
    lineno, heading = lines.take(f"'## {ANSWERS}'")
    if heading != f"## {ANSWERS}":
        raise lines.error(lineno, f"expected '## {ANSWERS}', found {heading[:60]!r}")
    answers: list[Answer] = []
    seen: set[str] = set()
    while (item := lines.peek()) is not None and item[1].startswith("### "):
        lineno, heading = lines.take("a question heading")
        qid = heading.removeprefix("### ")
        if not QUESTION_ID.fullmatch(qid):
            raise lines.error(lineno, f"{qid[:60]!r} is not a question id (e.g. Q1)")
        if qid in seen:
            raise lines.error(lineno, f"question {qid} is answered twice")
        seen.add(qid)
        fields, numbers = _read_fields(lines, _ANSWER_FIELDS, f"question {qid}")
        answers.append(_build(lines, lineno, numbers, Answer, qid, fields["question"], fields["answer"], fields["recorded-by"]))
    blocks: dict[str, Any] = {}
    order = list(BLOCKS)
    while (item := lines.peek()) is not None:
        lineno, heading = lines.take("a block heading")
        name = heading.removeprefix("## ") if heading.startswith("## ") else None
        if name not in _BLOCK_FIELDS:
            raise lines.error(lineno, f"expected a block heading ('## {' / ## '.join(BLOCKS)}'), found {heading[:60]!r}")
        if name in blocks or name not in order:
            raise lines.error(lineno, f"'## {name}' appears twice or out of order (order: {', '.join(BLOCKS)})")
        del order[: order.index(name) + 1]
        names = _BLOCK_FIELDS[name]
        trailing = _TRAILING_FIELD.get(name)
        if trailing and len(lines.items) > lines.pos + len(names):
            if lines.items[lines.pos + len(names)][1].startswith(f"- {trailing}: "):
                names = names + (trailing,)
        fields, numbers = _read_fields(lines, names, f"'## {name}'")
        blocks[name] = _build(lines, lineno, numbers, _make_block, name, fields)
    return Responses(
        meta,
        tuple(answers),
        blocks.get(PLAN_DECISION),
        blocks.get(ANALYSIS_REVIEW),
        blocks.get(DIRECTION_SELECTION),
        blocks.get(REPORT_AUTHORING),
        blocks.get(SCOPE_WAIVER),
    )


def read_state(path: Any, shown: str) -> Responses:
    """A run's sidecar, which only okstra's writer (`user_response.record`) writes: its seal
    must be there and match (`core.seal`, DESIGN §14), else StateError: changed outside okstra."""
    from okstra.core import fsio

    return parse(seal.open_text(fsio.read_text(path, what="sidecar"), shown, required=True), shown)


def _make_block(name: str, f: dict[str, Any]) -> Any:
    if name == PLAN_DECISION:
        return PlanDecision(f["status"], f["option"], f["reason"], f.get("plan-sha256"))
    if name == ANALYSIS_REVIEW:
        return AnalysisReview(f["status"], f["notes"])
    if name == DIRECTION_SELECTION:
        return DirectionSelection(f["option-id"], f["option-name"], f["notes"])
    if name == SCOPE_WAIVER:
        paths = f["paths"].split("\n") if isinstance(f["paths"], str) else f["paths"]
        return ScopeWaiver(f["stage"], tuple(paths) if isinstance(paths, list) else paths, f["reason"])
    return ReportAuthoring(f["status"], f["reason"])


# ---------------------------------------------------------------- export objects


def _obj(value: Any, where: str, keys: tuple[str, ...], required: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(f"{where}: expected an object, got {type(value).__name__}")
    unknown = sorted(set(value) - set(keys))
    if unknown:
        raise InputError(f"{where}: unknown field(s) {', '.join(unknown)}", hint=f"allowed: {', '.join(keys)}")
    missing = [k for k in required if k not in value]
    if missing:
        raise InputError(f"{where}: missing field(s) {', '.join(missing)}")
    return value


def plan_decision_from(obj: Any, where: str = "planDecision", *, bound: bool = True) -> PlanDecision:
    """A plan decision object. The HTML view's export carries `planSha256` (the sha256 of
    the data the page showed, `bound`); a decision typed at the terminal may not: the
    recording command binds it to the plan's data itself (DESIGN §9)."""
    keys = ("status", "option", "reason") + (("planSha256",) if bound else ())
    o = _obj(obj, where, keys, ("status",))
    return PlanDecision(o["status"], o.get("option"), o.get("reason"), o.get("planSha256"))


def analysis_review_from(obj: Any, where: str = "analysisReview") -> AnalysisReview:
    o = _obj(obj, where, ("status", "notes"), ("status",))
    return AnalysisReview(o["status"], o.get("notes"))


def direction_selection_from(obj: Any, where: str = "directionSelection") -> DirectionSelection:
    o = _obj(obj, where, ("optionId", "optionName", "notes"), ("optionId", "optionName"))
    return DirectionSelection(o["optionId"], o["optionName"], o.get("notes"))


def report_authoring_from(obj: Any, where: str = "reportAuthoring") -> ReportAuthoring:
    o = _obj(obj, where, ("status", "reason"), ("status", "reason"))
    return ReportAuthoring(o["status"], o["reason"])


def scope_waiver_from(obj: Any, where: str = "scopeWaiver") -> ScopeWaiver:
    o = _obj(obj, where, ("stage", "paths", "reason"), ("stage", "paths", "reason"))
    if not isinstance(o["paths"], list):
        raise InputError(f"{where}.paths: expected a list of paths")
    return ScopeWaiver(o["stage"], tuple(o["paths"]), o["reason"])


def responses_from_export_object(obj: Any) -> Responses:
    """The record for the object the HTML view's Export button serializes with
    `okstraSerializeSidecar(obj)`: `serialize(responses_from_export_object(obj))`
    is the byte-for-byte expectation for that button."""
    top = _obj(
        obj,
        "export object",
        ("meta", "answers", "planDecision", "analysisReview", "directionSelection", "reportAuthoring", "scopeWaiver"),
        ("meta", "answers"),
    )
    meta_keys = ("taskKey", "taskType", "reportNumber", "runId", "sourceReport", "createdAt")
    m = _obj(top["meta"], "meta", meta_keys, meta_keys)
    meta = SidecarMeta(m["taskKey"], m["taskType"], m["reportNumber"], m["runId"], m["sourceReport"], m["createdAt"])
    if not isinstance(top["answers"], list):
        raise InputError("answers: expected a list")
    answers = []
    for i, raw in enumerate(top["answers"]):
        keys = ("questionId", "question", "answer", "recordedBy")
        a = _obj(raw, f"answers[{i}]", keys, keys)
        answers.append(Answer(a["questionId"], a["question"], a["answer"], a["recordedBy"]))

    def block(key: str, make: Any) -> Any:
        value = top.get(key)
        return None if value is None else make(value)

    return Responses(
        meta,
        tuple(answers),
        block("planDecision", plan_decision_from),
        block("analysisReview", analysis_review_from),
        block("directionSelection", direction_selection_from),
        block("reportAuthoring", report_authoring_from),
        block("scopeWaiver", scope_waiver_from),
    )
