"""One class per failure kind.

Messages name the value, where it came from, and what to do next. Exit codes
are not decided here: `core.cli` maps each class to its code, so the table of
codes lives in one room.
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


class DeadlineError(OkstraError):
    """A deadline passed before the awaited state was reached."""
