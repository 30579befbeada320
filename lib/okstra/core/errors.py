"""One class per failure kind; `core.cli.exit_code_for` maps each to its exit code (DESIGN §1).

The kinds a caller can tell apart by exit code:
- `UsageError`: the command line is wrong (2).
- `InputError` and the kinds beside it, `PathEscapeError` (a kind of `InputError`),
  `StateError`, `RefusedError`, `ToolNotFoundError`, `ProcessError`: the command could
  not do its job with what it was given or found (2). The class names the cause for the
  code and the tests; the user sees the same one line.
- `ProblemsFound`: the job was done and the answer is no (1), one line per problem.
- Anything else is a bug: exit 70, from `core.cli.run` only.
A deadline is not an error: the domain returns a verdict and the command picks exit 3.

Every message is built the same way: `<what, naming the value and its source>; <hint:
what to do next>`, one line.
"""


class OkstraError(Exception):
    """Base of every expected failure. `str(err)` is the one-line message."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(message if hint is None else f"{message}; {hint}")


class UsageError(OkstraError):
    """Bad command line: unknown option, missing or malformed argument."""


class InputError(OkstraError):
    """A file or argument could not be read or parsed (missing, bad JSON, bad YAML)."""


class PathEscapeError(InputError):
    """A path read from data or arguments resolves outside the project root."""


class StateError(OkstraError):
    """A state file okstra owns is not a valid document, or is not where it must be."""


class RefusedError(OkstraError):
    """A rule refused the request before anything was written (e.g. roster rules)."""


class ToolNotFoundError(OkstraError):
    """An external program is not on PATH."""


class ProcessError(OkstraError):
    """An external program ran and failed."""


class ProblemsFound(OkstraError):
    """The command did its job and the answer is no: each problem is one line."""

    def __init__(self, problems: list[str], *, summary: str | None = None) -> None:
        self.problems = list(problems)
        super().__init__(summary or f"{len(self.problems)} problem(s) found")
