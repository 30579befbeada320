"""File writes that never leave a partial file, and locked JSON state (DESIGN §1).

Every write goes to a temporary file in the same folder, is written and
fdatasynced, then renamed over the target. Shared JSON state is changed only under
an exclusive `flock` on a separate `<file>.lock`, read-modify-write inside the
lock. A process killed at any moment leaves the previous complete document.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
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
    # Plain strings and os calls, not pathlib: this runs for every state update under its
    # lock, and the lock's hold time is what the DESIGN §13 updates/s budget measures.
    # fdatasync, not fsync: it makes the data and the size durable, which is what the
    # rename needs to publish a whole document; the timestamps fsync adds are not.
    target = os.fspath(path)
    folder = os.path.dirname(target) or "."
    _refuse_odd_target(target, folder)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    prefix, suffix = _temporary_affixes(target)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=suffix)
    try:
        try:
            os.fchmod(fd, mode)
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
            os.fdatasync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _temporary_affixes(target: str) -> tuple[str, str]:
    """The name of a writer's temporary of `target` is `<prefix><random><suffix>`; the sweep
    reads the same two."""
    return f".{os.path.basename(target)}.", ".tmp"


def _refuse_odd_target(path: str, folder: str) -> None:
    """okstra writes only regular files in real folders: a symlinked target or folder
    would carry the write elsewhere (outside the project, onto another state file),
    and a FIFO or folder in the target's place is not a document (DESIGN §14).
    A missing folder is made here."""
    try:
        folder_mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        os.makedirs(folder, exist_ok=True)
        return
    if stat.S_ISLNK(folder_mode):
        raise StateError(
            f"{folder}: the folder is a symbolic link; okstra does not write through links",
            hint="remove the link and run again",
        )
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise StateError(
            f"{path}: the file is a symbolic link; okstra does not write through links",
            hint="remove the link and run again",
        )
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "a folder is where the file must go", path)
    if not stat.S_ISREG(mode):
        raise StateError(
            f"{path}: is not a regular file (a folder, FIFO or device is in its place)", hint="move it away and run again"
        )


def write_locked(path: Path, data: str | bytes) -> None:
    """Write a whole document under its lock, first removing what writers of it killed
    mid-write left: a document that every writer writes this way (report-draft's report
    data) has no writer mid-write while the lock is held (DESIGN §14)."""
    target = os.fspath(path)
    # Checked before the lock file is made beside it: a refused target changes nothing.
    _refuse_odd_target(target, os.path.dirname(target) or ".")
    with locked(target):
        _sweep_temporaries(target)
        atomic_write(target, data)


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
    return decoded(read_bytes(path, what=what), path)


def _open_text(path: Path | str, what: str) -> tuple[int, str] | None:
    """The still-open file and UTF-8 text of a regular file, or None when there is no
    such file. The caller closes the file."""
    opened = _open_bytes(path, what)
    if opened is None:
        return None
    fd, raw = opened
    try:
        return fd, decoded(raw, path)
    except InputError:
        os.close(fd)
        raise


def decoded(raw: bytes, path: Path | str) -> str:
    """The UTF-8 text of bytes read from `path` (an InputError naming it when they are not)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text", hint="save it as UTF-8") from None


def _open_bytes(path: Path | str, what: str) -> tuple[int, bytes] | None:
    """The still-open file and bytes of a regular file, or None when there is no such
    file; an unreadable one is an InputError naming it (DESIGN §14). The caller closes
    the file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _unreadable(path, exc, what) from None
    try:
        return fd, _read_regular(fd, path)
    except BaseException as exc:
        os.close(fd)
        if isinstance(exc, OSError):
            raise _unreadable(path, exc, what) from None
        raise


def _unreadable(path: Path | str, exc: OSError, what: str) -> InputError:
    """The one wording of a file okstra could not read."""
    if isinstance(exc, IsADirectoryError):
        return InputError(f"{path}: is a directory, expected a {what}", hint="give the path of a file, or move the folder away")
    return InputError(f"{path}: cannot read: {exc.strerror}", hint="check the path and its permissions")


def read_bytes(path: Path, *, what: str = "file") -> bytes:
    """The bytes of a regular file (a FIFO or device is refused without blocking on it);
    a missing or unreadable one is an InputError, worded as `read_text` words it."""
    opened = _open_bytes(path, what)
    if opened is None:
        raise InputError(f"{path}: no such {what}", hint="check the path")
    fd, raw = opened
    os.close(fd)
    return raw


def _read_regular(fd: int, path: Path | str) -> bytes:
    """The bytes of the open file `fd`, refused unless it is a regular file: opened
    without blocking, a FIFO or device never holds the reader up."""
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{path}: is not a regular file (a FIFO or device)", hint="put a file there")
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def read_json(path: Path, *, what: str = "file") -> Any:
    return parse_json(read_text(path, what=what), str(path))


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock for `path` (on `<path>.lock`; released on close or death)."""
    lock = os.fspath(path) + ".lock"
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(lock) or ".", exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
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
    target = os.fspath(path)
    opened = None
    try:
        with locked(target):
            _sweep_temporaries(target)
            opened = _open_text(target, "state file")
            if opened is not None:
                document = parse_json(opened[1], target)
            elif default is not None:
                document = default()
            else:
                raise StateError(f"{path}: no such state file", hint="was the run prepared with render-bundle?")
            if mutate(document):
                write_json(target, document)
            return document
    finally:
        # Closed once the lock is released: after the rename this is the last handle on the
        # replaced document's file, and freeing that file (about 0.2 ms on ext4) then holds up
        # no other writer.
        if opened is not None:
            os.close(opened[0])


def _sweep_temporaries(path: Path) -> None:
    """Remove what writers of `path` killed mid-write left (their temporaries). Called under
    the lock: no writer of this locked document can be mid-write now."""
    target = os.fspath(path)
    folder = os.path.dirname(target) or "."
    prefix, suffix = _temporary_affixes(target)
    # Only this target's: `.<name>.<random>.tmp` with no dot in the random part, so the
    # temporaries of `<name>.last-valid` (or any `<name>.<more>`) beside it are not touched.
    with os.scandir(folder) as entries:
        stale = [
            entry.path
            for entry in entries
            if entry.name.startswith(prefix)
            and entry.name.endswith(suffix)
            and len(entry.name) > len(prefix) + len(suffix)
            and "." not in entry.name[len(prefix) : -len(suffix)]
        ]
    for leftover in stale:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(leftover)


def append_line(path: Path, line: str) -> None:
    """Append one line to a log under its lock, rewriting the file atomically."""
    path = Path(path)
    with locked(path):
        existing = path.read_text(encoding="utf-8") if path.exists() else ""
        if existing and not existing.endswith("\n"):
            existing += "\n"
        atomic_write(path, existing + line.rstrip("\n") + "\n")
