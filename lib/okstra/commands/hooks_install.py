"""`hooks-install`: argument handling; the work is okstra.harness.settings_merge."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from okstra.core import cli
from okstra.core.errors import UsageError

PROG = "hooks-install"


def _say_install(outcome) -> None:  # noqa: ANN001 - settings_merge.HooksChange, imported lazily
    state = "installed" if outcome.changed else "already installed (unchanged)"
    print(f"{outcome.settings_path}: okstra hooks {state}: " + ", ".join(f"{h['event']}[{h['matcher']}]" for h in outcome.hooks))
    if outcome.allow_write:
        print(f"{outcome.settings_path}: sandbox write allowances (okstra's): {', '.join(outcome.allow_write)}")
    if outcome.git_excluded is not None:
        cli.say(PROG, f"added {outcome.settings_path.name} to {outcome.git_excluded}: your personal settings stay out of git")


def _say_uninstall(outcome) -> None:  # noqa: ANN001
    if outcome.removed_file:
        state = "removed the file okstra created"
    else:
        state = "removed" if outcome.changed else "none found (unchanged)"
    print(f"{outcome.settings_path}: okstra hooks {state}")


def _run(args: argparse.Namespace) -> int:
    from okstra.harness import settings_merge

    prefix = Path(args.prefix).expanduser() if args.prefix else cli.BIN_DIR.parent
    if args.all:
        if not args.uninstall or args.project:
            raise UsageError("--all goes with --uninstall and without --project", hint="hooks-install --uninstall --all")
        done = settings_merge.uninstall_everywhere(prefix)
        if args.json:
            cli.emit_json([{"project": str(p), "settings": [o.to_dict() for o in outs] if outs else None} for p, outs in done])
            return cli.EXIT_OK
        for project, outcomes in done:
            if outcomes is None:
                print(f"{project}: the project is gone (forgotten)")
            for outcome in outcomes or []:
                if outcome.changed:
                    _say_uninstall(outcome)
        return cli.EXIT_OK
    if not args.project:
        raise UsageError("the following arguments are required: --project", hint=f"see '{PROG} --help'")
    project = Path(args.project).expanduser()
    if args.uninstall:
        outcomes = settings_merge.uninstall_project(project, prefix if args.prefix else None)
        if args.json:
            cli.emit_json([o.to_dict() for o in outcomes])
        else:
            changed = [o for o in outcomes if o.changed] or outcomes[:1]
            for outcome in changed:
                _say_uninstall(outcome)
        return cli.EXIT_OK
    outcome = settings_merge.apply(project, prefix, shared=args.shared, sandbox=args.sandbox)
    if args.json:
        cli.emit_json(outcome.to_dict())
    else:
        _say_install(outcome)
    sys.stdout.flush()
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("--project", metavar="DIR")
    parser.add_argument("--shared", action="store_true")
    parser.add_argument("--sandbox", action="store_true")
    parser.add_argument("--uninstall", action="store_true")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--prefix", metavar="PREFIX")
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
