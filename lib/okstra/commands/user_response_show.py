"""`user-response-show`: a report's unanswered open questions and the answers given (DESIGN §9)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from okstra.core import cli, paths
from okstra.report import sidecar as sc
from okstra.report import user_response
from okstra.report.user_response import one_line, recorded_by_text


def _decision_line(name: str, block: dict[str, Any]) -> str:
    parts = [f"{k}={one_line(v, 60)}" for k, v in block.items() if v is not None]
    return f"  {name}: " + ", ".join(parts)


def decisions_text(decisions: dict[str, Any]) -> list[str]:
    return [_decision_line(name, block) for name, block in decisions.items()]


PROG = "user-response-show"


def _run(args: argparse.Namespace) -> int:
    root = paths.find_project_root(explicit=args.project_root)
    shown = user_response.show(root, args.report)
    if args.json:
        cli.emit_json(shown)
        return cli.EXIT_OK
    out = [f"report:  {shown['report']}", f"sidecar: {shown['sidecar'] or '(none yet)'}"]
    out.append(f"unanswered ({len(shown['unanswered'])}):")
    for q in shown["unanswered"]:
        options = f"  [options: {' | '.join(one_line(o, 30) for o in q['options'])}]" if q.get("options") else ""
        out.append(f"  {q['id']}  {one_line(q['question'])}{options}")
    out.append(f"answered ({len(shown['answers'])}):")
    for a in shown["answers"]:
        by = f"  ({recorded_by_text(a['recordedBy'])})" if a["recordedBy"] != sc.USER else ""
        out.append(f"  {a['questionId']}  {one_line(a['question'], 50)} -> {one_line(a['answer'])}{by}")
    out.append("decisions:" + ("" if shown["decisions"] else " none"))
    out += decisions_text(shown["decisions"])
    sys.stdout.write("\n".join(out) + "\n")
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("--report", required=True)
    parser.add_argument("--project-root")
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
