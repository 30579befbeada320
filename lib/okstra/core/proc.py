"""The one seam for every external program (tmux, cmux, git, provider CLIs).

Lookups go through `which` (a clear "not found" error), output is decoded so
it can never crash (`backslashreplace`), and with OKSTRA_DEBUG=1 every command
is logged to stderr as a shell-quoted line.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from okstra.core import settings
from okstra.core.errors import ProcessError, ToolNotFoundError


@dataclass(frozen=True)
class Completed:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def which(name: str, *, path: str | None = None) -> str:
    found = shutil.which(name, path=path)
    if found is None:
        raise ToolNotFoundError(f"{name} not found on PATH", hint=f"install {name} or put it on PATH")
    return found


def available(name: str) -> bool:
    """True when `name` is on PATH (a backend checks for its terminal before a run is prepared)."""
    return shutil.which(name) is not None


def _log(argv: Sequence[str]) -> None:
    if settings.debug():
        sys.stderr.write(f"okstra: + {shlex.join(argv)}\n")


def run(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    timeout: float | None = None,
    check: bool = True,
) -> Completed:
    """Run to completion and capture text output; `check` turns a failure into ProcessError."""
    argv = [str(a) for a in argv]
    exe = argv[0] if os.sep in argv[0] else which(argv[0])
    _log(argv)
    try:
        done = subprocess.run(
            [exe, *argv[1:]],
            cwd=cwd,
            env=dict(env) if env is not None else None,
            input=input,
            capture_output=True,
            text=True,
            errors="backslashreplace",
            timeout=timeout,
            stdin=None if input is not None else subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise ToolNotFoundError(f"{argv[0]} not found", hint="check the path or install it") from None
    except subprocess.TimeoutExpired:
        raise ProcessError(f"{argv[0]} did not finish within {timeout} s") from None
    result = Completed(tuple(argv), done.returncode, done.stdout, done.stderr)
    if check and done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no error output"])[-1]
        raise ProcessError(f"{shlex.join(argv[:3])} exited {done.returncode}: {last}")
    return result


def spawn(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    stdin: int | IO[bytes] | None = subprocess.DEVNULL,
    stdout: int | IO[bytes] | None = None,
    stderr: int | IO[bytes] | None = None,
    new_session: bool = True,
) -> subprocess.Popen[bytes]:
    """Start a process without waiting; by default in its own session and process group."""
    argv = [str(a) for a in argv]
    exe = argv[0] if os.sep in argv[0] else which(argv[0])
    _log(argv)
    try:
        return subprocess.Popen(
            [exe, *argv[1:]],
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=new_session,
        )
    except FileNotFoundError:
        raise ToolNotFoundError(f"{argv[0]} not found", hint="check the path or install it") from None
