"""File writes that never leave a partial file, and locked JSON state (DESIGN §1).

Every write goes to a temporary file in the same folder, is flushed and
fsynced, then renamed over the target. Shared JSON state is changed only under
an exclusive `flock` on a separate `<file>.lock`, read-modify-write inside the
lock. A process killed at any moment leaves the previous complete document.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import glob
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from okstra.core.errors import InputError, StateError

_LONE_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def atomic_write(path: Path, data: str | bytes, *, mode: int = 0o644) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _refuse_odd_target(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _refuse_odd_target(path: Path) -> None:
    """okstra writes only regular files in real folders: a symlinked target or folder
    would carry the write elsewhere (outside the project, onto another state file),
    and a FIFO or folder in the target's place is not a document (DESIGN §14)."""
    for what, candidate in (("file", path), ("folder", path.parent)):
        try:
            info = os.lstat(candidate)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(info.st_mode):
            raise StateError(
                f"{candidate}: the {what} is a symbolic link; okstra does not write through links",
                hint="remove the link and run again",
            )
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "a folder is where the file must go", str(path))
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "a folder is where the file must go", str(path))
    if not stat.S_ISREG(info.st_mode):
        raise StateError(
            f"{path}: is not a regular file (a folder, FIFO or device is in its place)", hint="move it away and run again"
        )


def dumps(document: Any) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def write_json(path: Path, document: Any) -> None:
    atomic_write(path, dumps(document))


def parse_json(text: str, source: str) -> Any:
    """Parse JSON from an argument or file; errors name the source, line and column."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{source}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
            hint="fix the JSON and run again",
        ) from None
    except RecursionError:
        raise InputError(f"{source}: JSON nested too deeply", hint="flatten the document and run again") from None
    if "\\u" in text and _LONE_SURROGATE.search(text):
        try:
            json.dumps(document, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(
                f"{source}: a string holds a lone surrogate (e.g. \\ud800), which is not text", hint="send UTF-8 text"
            ) from None
    return document


def read_text(path: Path, *, what: str = "file") -> str:
    try:
        return _read_regular(Path(path)).decode("utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such {what}", hint="check the path") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, expected a {what}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None


def read_bytes(path: Path) -> bytes:
    """The bytes of a regular file (a FIFO or device is refused without blocking on it)."""
    return _read_regular(Path(path))


def _read_regular(path: Path) -> bytes:
    """The bytes of a regular file; a FIFO or device is refused without blocking on it."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{path}: is not a regular file (a FIFO or device)", hint="put a file there")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_json(path: Path, *, what: str = "file") -> Any:
    return parse_json(read_text(path, what=what), str(path))


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock for `path` (on `<path>.lock`; released on close or death)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def update_json(
    path: Path,
    mutate: Callable[[Any], bool],
    *,
    default: Callable[[], Any] | None = None,
) -> Any:
    """Read-modify-write `path` under its lock; write only when `mutate` says it changed.

    `mutate` gets the current document (or `default()` when the file is missing)
    and returns True when it changed it. Returns the document as it now stands.
    """
    path = Path(path)
    with locked(path):
        _sweep_temporaries(path)
        if path.exists():
            document = read_json(path, what="state file")
        elif default is not None:
            document = default()
        else:
            raise StateError(f"{path}: no such state file", hint="was the run prepared with render-bundle?")
        if mutate(document):
            write_json(path, document)
        return document


def _sweep_temporaries(path: Path) -> None:
    """Remove what writers of `path` killed mid-write left (their temporaries). Called under
    the lock: no writer of this locked document can be mid-write now."""
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()


def append_line(path: Path, line: str) -> None:
    """Append one line to a log under its lock, rewriting the file atomically."""
    path = Path(path)
    with locked(path):
        existing = path.read_text(encoding="utf-8") if path.exists() else ""
        if existing and not existing.endswith("\n"):
            existing += "\n"
        atomic_write(path, existing + line.rstrip("\n") + "\n")
