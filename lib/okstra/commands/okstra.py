"""The `okstra` dispatcher: `okstra team reclaim ...` runs `bin/team-reclaim ...`."""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import okstra
from okstra.core import cli
from okstra.core.errors import UsageError

PROG = "okstra"
MAX_WORDS = 3


def commands(bin_dir: Path = cli.BIN_DIR) -> dict[str, str]:
    """Public commands (those whose docstring has a Summary) -> their summary."""
    found: dict[str, str] = {}
    for path in sorted(bin_dir.iterdir()):
        if path.name == PROG or not path.is_file() or not os.access(path, os.X_OK):
            continue
        summary = cli.summary_of(cli.doc_of_file(path))
        if summary:
            found[path.name] = summary
    return found


def resolve(words: Sequence[str], known: dict[str, str]) -> tuple[str, list[str]]:
    """The longest run of leading words that names a command, joined by '-'."""
    for n in range(min(MAX_WORDS, len(words)), 0, -1):
        name = "-".join(words[:n])
        # `okstra config` runs `okstra-config`: a door whose bare name would be too generic on PATH.
        for candidate in (name, f"{PROG}-{name}"):
            if candidate in known:
                return candidate, list(words[n:])
    wanted = "-".join(words[:2]) if len(words) > 1 else words[0]
    near = difflib.get_close_matches(wanted, list(known), n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(near)}?" if near else "see 'okstra help'"
    raise UsageError(f"no such command '{wanted}'", hint=hint)


def help_listing(known: dict[str, str]) -> str:
    width = max((len(name) for name in known), default=0)
    lines = ["Usage: okstra <command> [ARGS...]   (or okstra <noun> <verb> [ARGS...])", "", "Commands:"]
    lines += [f"  {name.ljust(width)}  {summary}" for name, summary in known.items()]
    lines += ["", "See 'okstra help <command>' for one command's help."]
    return "\n".join(lines)


def _run(argv: list[str], doc: str) -> int:
    known = commands()
    if not argv or argv[0] in {"-h", "--help"}:
        sys.stdout.write(doc.rstrip() + "\n\n" + help_listing(known) + "\n")
        return cli.EXIT_OK
    if argv[0] == "--version":
        sys.stdout.write(f"okstra {okstra.__version__}\n")
        return cli.EXIT_OK
    if argv[0] == "completion":
        from okstra.commands import completion

        shells = {"bash": completion.bash, "zsh": completion.zsh}
        if len(argv) != 2 or argv[1] not in shells:
            raise UsageError("completion takes one shell: bash or zsh", hint="okstra completion bash > okstra.bash")
        sys.stdout.write(shells[argv[1]](list(known)))
        return cli.EXIT_OK
    if argv[0] == "help":
        if len(argv) == 1:
            sys.stdout.write(help_listing(known) + "\n")
            return cli.EXIT_OK
        name, _ = resolve(argv[1:], known)
        sys.stdout.write((cli.doc_of_file(cli.BIN_DIR / name) or "").rstrip() + "\n")
        return cli.EXIT_OK
    name, rest = resolve(argv, known)
    target = str(cli.BIN_DIR / name)
    sys.stdout.flush()
    # Same interpreter as ours: the installed venv's Python stays in charge.
    os.execv(sys.executable, [sys.executable, target, *rest])


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    return cli.run(PROG, lambda: _run(args, doc or cli.doc_for(PROG)))
