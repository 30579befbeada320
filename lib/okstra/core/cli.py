"""The command skeleton every `bin/` door uses, and the exit codes (DESIGN §1).

A door's docstring is its help: a `Summary:` line, a `Usage:` block, options,
exit codes and an example. `parser()` builds an argparse parser whose `--help`
prints that docstring and whose errors are one line and exit 2. `run()` maps
every failure to its exit code and prints `<command>: <message>` on stderr.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from okstra.core import errors, home, settings

EXIT_OK = 0
EXIT_NO = 1  # the command did its job and the answer is no
EXIT_FAILED = 2  # the command could not do its job (bad usage, bad input, path escape)
EXIT_DEADLINE = 3
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130
EXIT_SIGNALLED = 128  # + the signal number, as a shell reports a process a signal stopped

EXIT_CODES_HELP = """\
Exit codes:
  0    success
  1    done, and the answer is no (problems found, unhealthy, denied)
  2    could not do the job (bad usage or input, path outside the project)
  3    a deadline passed
  70   internal error (a bug; OKSTRA_DEBUG=1 shows the traceback)
  130  interrupted"""

BIN_DIR = home.ROOT / "bin"


def signalled(signum: int) -> int:
    return EXIT_SIGNALLED + signum


def exit_code_for(exc: errors.OkstraError) -> int:
    if isinstance(exc, errors.ProblemsFound):
        return EXIT_NO
    return EXIT_FAILED


def positive_int(text: str, flag: str) -> int:
    """A whole number from 1 up, as `flag` gives it (ASCII digits only: `int()` would take
    other scripts' digits, signs and underscores)."""
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        raise errors.InputError(f"{flag} {text[:40]!r} is not a whole number from 1 up", hint=f"pass {flag} 1, 2, …")
    return int(text)


def summary_of(doc: str | None) -> str | None:
    for line in (doc or "").splitlines():
        if line.startswith("Summary:"):
            return line.removeprefix("Summary:").strip()
    return None


def usage_of(doc: str | None) -> str | None:
    """The `Usage:` block: its first line and the indented lines under it."""
    lines = (doc or "").splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Usage:"):
            block = [line.removeprefix("Usage:").strip()]
            block += [rest.strip() for rest in lines[i + 1 :] if rest.startswith("       ")]
            return "\n       ".join(block)
    return None


def doc_of_file(path: Path) -> str | None:
    """Read a door's docstring without running it (help listings stay fast and safe)."""
    try:
        source = path.read_text(encoding="utf-8")
        return ast.get_docstring(ast.parse(source))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None


def doc_for(command: str) -> str:
    """The help text of `bin/<command>`, for library callers that have no door."""
    return doc_of_file(BIN_DIR / command) or f"Summary: {command}\nUsage: {command}"


class _HelpAction(argparse.Action):
    def __init__(self, option_strings: list[str], dest: str, doc: str = "", **kw: Any) -> None:
        self._doc = doc
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        sys.stdout.write(self._doc.rstrip("\n") + "\n")
        parser.exit(EXIT_OK)


class _VersionAction(argparse.Action):
    def __init__(self, option_strings: list[str], dest: str, **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        from okstra import __version__  # the one version string (pyproject reads it too)

        sys.stdout.write(f"{parser.prog} (okstra {__version__})\n")
        parser.exit(EXIT_OK)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise errors.UsageError(message, hint=f"see '{self.prog} --help'")


def parser(prog: str, doc: str | None = None) -> argparse.ArgumentParser:
    """An argparse parser whose help is the door's docstring and whose errors exit 2."""
    doc = doc or doc_for(prog)
    p = _Parser(prog=prog, usage=usage_of(doc), add_help=False, allow_abbrev=False)
    p.add_argument("-h", "--help", action=_HelpAction, doc=doc, help="show this help")
    p.add_argument("--version", action=_VersionAction, help="show okstra's version")
    return p


def seconds(*, maximum: float = 86400.0, zero: bool = False) -> Callable[[str], float]:
    """An argparse type for a duration: seconds above 0 (from 0 with `zero`) up to `maximum`."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not ((value >= 0 if zero else value > 0) and value <= maximum):
            low = "from 0" if zero else "above 0"
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds {low} up to {maximum:g}")
        return value

    return parse


def run_options(p: argparse.ArgumentParser, *, manifest_required: bool = False) -> None:
    """`--run-manifest PATH` and `--project-root DIR`: every command that works on a run takes
    both and hands them to `model.layout.open_run` (DESIGN §2)."""
    p.add_argument("--run-manifest", metavar="PATH", required=manifest_required)
    p.add_argument("--project-root", metavar="DIR")


def project_option(p: argparse.ArgumentParser) -> None:
    """`--project-root DIR` for a command that works on a project but not on one run."""
    p.add_argument("--project-root", metavar="DIR")


def say(prog: str, message: str) -> None:
    """Progress and warnings: stderr, prefixed, never mixed with data on stdout."""
    sys.stderr.write(f"{prog}: {message}\n")
    sys.stderr.flush()


def emit_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def environment_message(exc: OSError) -> str:
    """One line for an OSError: which file, what the system said, what to do."""
    where = f"{os.fsdecode(exc.filename)!r}: " if exc.filename is not None else ""
    what = exc.strerror or type(exc).__name__
    return f"{where}{what}; free space or fix the folder's permissions and type, then run again"


def run(prog: str, body: Callable[[], int | None]) -> int:
    """Run a command body and turn every outcome into an exit code."""
    try:
        code = body()
        sys.stdout.flush()
        return EXIT_OK if code is None else code
    except errors.ProblemsFound as exc:
        for problem in exc.problems:
            say(prog, problem)
        if not exc.problems:
            say(prog, str(exc))
        return EXIT_NO
    except errors.OkstraError as exc:
        say(prog, " ".join(str(exc).split("\n")))
        return exit_code_for(exc)
    except KeyboardInterrupt:
        say(prog, "interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): nothing more to say to it.
        sys.stderr.close()
        return EXIT_OK
    except OSError as exc:
        # The environment refused (disk full, read-only folder, odd file type): not a bug,
        # and the writes are atomic so nothing is half-written (DESIGN §14).
        say(prog, environment_message(exc))
        return EXIT_FAILED
    except (RecursionError, MemoryError):
        say(prog, "the input is nested too deeply or too large to handle; give a smaller, flatter input")
        return EXIT_FAILED
    except UnicodeError as exc:
        say(prog, f"text that is not valid UTF-8 ({type(exc).__name__}: {exc.reason}); use UTF-8 names and text")
        return EXIT_FAILED
    except Exception as exc:  # noqa: BLE001 - the one place that turns bugs into exit 70
        if settings.debug():
            traceback.print_exc()
        detail = " ".join(str(exc).split())
        say(prog, f"internal error: {type(exc).__name__}: {detail} (set OKSTRA_DEBUG=1 for the traceback)")
        return EXIT_INTERNAL
