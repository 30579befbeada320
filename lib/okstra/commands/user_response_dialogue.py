"""`user-response-write --interactive`: ask the user, in their terminal, what the report asks them (DESIGN §9).

Each open question (a numbered menu for a choice, a line editor or `$EDITOR` for free
text), then each decision the report requires, then the result and a confirmation;
only then is anything recorded (through `report.user_response.record`, like every write).
Works over a plain pipe too: one line per answer, the same prompts on stderr.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from okstra.core import cli, proc
from okstra.core.errors import InputError
from okstra.report import sidecar as sc
from okstra.report import user_response
from okstra.report.user_response import one_line

EDIT = ":e"


class InputEnded(InputError):
    """Stdin ended mid-dialogue: never asked again (a pipe would loop forever)."""


class Terminal:
    """Prompts on stderr, answers from stdin; a real terminal gets readline's line editor."""

    def __init__(self, stdin: IO[str], stderr: IO[str], env: dict[str, str]) -> None:
        self.stdin, self.stderr, self.env = stdin, stderr, env
        self.tty = stdin.isatty()
        if self.tty:
            import readline  # noqa: F401  (imported for its effect: input() gets line editing and history)

    def say(self, text: str = "") -> None:
        self.stderr.write(text + "\n")
        self.stderr.flush()

    def ask(self, prompt: str, what: str) -> str:
        self.stderr.write(prompt)
        self.stderr.flush()
        ended = InputEnded(f"--interactive: the input ended before {what}; nothing recorded")
        if self.tty:
            try:
                return input()
            except EOFError:
                raise ended from None
        line = self.stdin.readline()
        if not line:
            raise ended
        self.say()  # nothing echoed the answer: end the prompt's line
        return line.removesuffix("\n").removesuffix("\r")

    def edit(self, initial: str, what: str) -> str:
        """The text after `$VISUAL`/`$EDITOR` (default vi) edited a file holding `initial`."""
        editor = shlex.split(self.env.get("VISUAL") or self.env.get("EDITOR") or "vi")
        with tempfile.TemporaryDirectory(prefix="okstra-answer-") as folder:
            path = Path(folder) / "answer.md"
            path.write_text(initial, encoding="utf-8")
            child = proc.spawn([*editor, str(path)], stdin=None, new_session=False)
            if child.wait() != 0:
                raise InputError(f"--interactive: the editor {editor[0]} exited {child.returncode} for {what}; nothing recorded")
            return path.read_text(encoding="utf-8").rstrip("\n")


def _menu(term: Terminal, items: list[str], what: str, *, keep: str | None = None) -> int | None:
    """A numbered menu; the index chosen, or None for Enter (skip, or keep `keep`)."""
    for i, item in enumerate(items, start=1):
        term.say(f"  {i}) {one_line(item, 100)}")
    hint = f"Enter keeps {one_line(keep, 40)!s}" if keep is not None else "Enter skips"
    while True:
        raw = term.ask(f"  choose 1-{len(items)} ({hint}): ", what).strip()
        if raw == "":
            return None
        if raw.isdigit() and 1 <= int(raw) <= len(items):
            return int(raw) - 1
        term.say(f"  {raw!r} is not a number from 1 to {len(items)}")


def _text(term: Terminal, label: str, what: str, *, keep: str | None = None) -> str | None:
    """Free text: one line, or `:e` for $EDITOR; None for Enter (skip, or keep)."""
    hint = "Enter keeps it" if keep is not None else "Enter skips"
    raw = term.ask(f"  {label} ({hint}, {EDIT} opens $EDITOR): ", what)
    if raw.strip() == EDIT:
        return term.edit(keep or "", what)
    return None if raw.strip(" \t") == "" else raw


def _questions(term: Terminal, ref: user_response.ReportRef, existing: sc.Responses | None) -> list[tuple[str, str]]:
    pairs = []
    for q in ref.questions:
        had = existing.answer(q.id) if existing else None
        term.say()
        term.say(f"{q.id} ({q.kind}): {one_line(q.question, 200)}")
        if q.context:
            term.say(f"  context: {one_line(q.context, 200)}")
        if had is not None:
            term.say(f"  recorded: {one_line(had.answer)} ({user_response.recorded_by_text(had.recorded_by)})")
        if q.kind == "choice" and q.options:
            picked = _menu(term, list(q.options), f"the answer to {q.id}", keep=had.answer if had else None)
            if picked is not None:
                pairs.append((q.id, q.options[picked]))
        else:
            text = _text(term, "answer", f"the answer to {q.id}", keep=had.answer if had else None)
            if text is not None:
                pairs.append((q.id, text))
    return pairs


def _retry(term: Terminal, make: Callable[[], Any]) -> Any:
    """Ask a block again until its record is valid (the record's own rules, DESIGN §9)."""
    while True:
        try:
            return make()
        except InputEnded:
            raise
        except InputError as exc:
            term.say(f"  {exc.message}: answer again")


def _option(term: Terminal, ref: user_response.ReportRef, what: str) -> user_response.Option | None:
    if not ref.options:
        raw = term.ask("  option id: ", what).strip()
        return user_response.Option(raw, raw) if raw else None
    picked = _menu(term, [f"{o.id}: {o.name}" for o in ref.options], what)
    return None if picked is None else ref.options[picked]


def _plan(term: Terminal, ref: user_response.ReportRef) -> sc.PlanDecision | None:
    status = _menu(term, list(sc.PLAN_STATUSES), "the plan decision")
    if status is None:
        return None
    option = _option(term, ref, "the approved option") if sc.PLAN_STATUSES[status] == "approved" else None
    reason = _text(term, "reason", "the plan decision's reason")
    return sc.PlanDecision(sc.PLAN_STATUSES[status], option.id if option else None, reason)


def _review(term: Terminal, ref: user_response.ReportRef) -> sc.AnalysisReview | None:
    status = _menu(term, list(sc.REVIEW_STATUSES), "the analysis review")
    if status is None:
        return None
    return sc.AnalysisReview(sc.REVIEW_STATUSES[status], _text(term, "notes", "the review's notes"))


def _direction(term: Terminal, ref: user_response.ReportRef) -> sc.DirectionSelection | None:
    option = _option(term, ref, "the direction")
    if option is None:
        return None
    return sc.DirectionSelection(option.id, option.name, _text(term, "notes", "the direction's notes"))


def _authoring(term: Terminal, ref: user_response.ReportRef) -> sc.ReportAuthoring | None:
    status = _menu(term, list(sc.AUTHORING_STATUSES), "the report authoring decision")
    if status is None:
        return None
    reason = _text(term, "reason (required, also when approving)", "the report authoring reason")
    return sc.ReportAuthoring(sc.AUTHORING_STATUSES[status], reason or "")


_ASK = {
    sc.PLAN_DECISION: ("approve, request a revision of, or reject the plan", _plan),
    sc.ANALYSIS_REVIEW: ("accept the analysis or request changes", _review),
    sc.DIRECTION_SELECTION: ("choose one implementation option", _direction),
    sc.REPORT_AUTHORING: ("may the lead write this report itself?", _authoring),
}


def _decisions(term: Terminal, ref: user_response.ReportRef, recorded_by: str) -> user_response.Decisions:
    if not ref.decisions_required:
        return user_response.Decisions()
    if recorded_by != sc.USER:
        term.say()
        term.say(f"decisions ({', '.join(ref.decisions_required)}) are not asked here: {user_response.DECISIONS_ARE_THE_USERS}")
        return user_response.Decisions()
    made: dict[str, Any] = {}
    for name in ref.decisions_required:
        question, ask = _ASK[name]
        term.say()
        term.say(f"{name}: {question}")
        made[name] = _retry(term, lambda ask=ask: ask(term, ref))
    return user_response.Decisions(
        made.get(sc.PLAN_DECISION), made.get(sc.ANALYSIS_REVIEW), made.get(sc.DIRECTION_SELECTION), made.get(sc.REPORT_AUTHORING)
    )


def _summary(term: Terminal, pairs: list[tuple[str, str]], decisions: user_response.Decisions) -> None:
    term.say()
    term.say("To record:")
    for qid, text in pairs:
        term.say(f"  {qid}: {one_line(text)}")
    for name, block in decisions.named().items():
        if block is not None:
            fields = {k: v for k, v in vars(block).items() if v is not None}
            term.say(f"  {name}: " + ", ".join(f"{k.replace('_', '-')}={one_line(str(v), 60)}" for k, v in fields.items()))
    if not pairs and not decisions.given():
        term.say("  nothing")


def run(
    prog: str,
    root: Path,
    args: argparse.Namespace,
    recorded_by: str,
    print_result: Callable[[str, user_response.WriteResult, bool], None],
) -> int:
    ref = user_response.load_report(root, args.report)
    existing = user_response.read_sidecar(ref)
    term = Terminal(sys.stdin, sys.stderr, dict(os.environ))
    term.say(f"Report {ref.run.relative(ref.markdown)}: {len(ref.questions)} open question(s)")
    pairs = _questions(term, ref, existing)
    decisions = _decisions(term, ref, recorded_by)
    _summary(term, pairs, decisions)
    if not pairs and not decisions.given():
        cli.say(prog, "nothing to record")
        return cli.EXIT_NO
    if term.ask("Record this? [y/N]: ", "the confirmation").strip().lower() not in ("y", "yes"):
        cli.say(prog, "nothing recorded")
        return cli.EXIT_NO
    print_result(prog, user_response.record(ref, pairs, decisions, recorded_by), args.json)
    return cli.EXIT_OK
