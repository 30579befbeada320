"""Wake when files land in a few folders (DESIGN §5, §13).

`FolderWatch` uses Linux inotify through ctypes (libc `inotify_init1` and
`inotify_add_watch`; no dependency), so worker-wait notices a landed result
within milliseconds instead of polling. Where libc has no inotify it falls
back to comparing the folders' mtimes every `FALLBACK_POLL` seconds. Folders
that do not exist yet are added as soon as they appear.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import select
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

FALLBACK_POLL = 0.05  # seconds between stat polls without inotify

IN_CLOSE_WRITE = 0x00000008
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC
_MASK = IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE


def _libc_inotify() -> tuple[Any, int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
    except (OSError, AttributeError):
        return None
    return (libc, fd) if fd >= 0 else None


class FolderWatch:
    """Wake on changes in a few folders: inotify when libc has it, else a short stat poll."""

    def __init__(self, folders: Sequence[Path], *, use_inotify: bool = True) -> None:
        self.folders = list(dict.fromkeys(Path(f) for f in folders))
        self.fd: int | None = None
        self._watched: set[Path] = set()
        self._libc: Any = None
        found = _libc_inotify() if use_inotify else None
        if found is not None:
            self._libc, self.fd = found
        self._add_missing()
        self._signature = self._stat_signature()

    @property
    def uses_inotify(self) -> bool:
        return self.fd is not None

    def _add_missing(self) -> None:
        if self.fd is None:
            return
        for folder in self.folders:
            if folder not in self._watched and folder.is_dir():
                if self._libc.inotify_add_watch(self.fd, os.fsencode(folder), _MASK) >= 0:
                    self._watched.add(folder)

    def _stat_signature(self) -> tuple[Any, ...]:
        sig = []
        for folder in self.folders:
            try:
                st = os.stat(folder)
            except OSError:
                sig.append(None)
                continue
            sig.append((st.st_mtime_ns, st.st_ino))
        return tuple(sig)

    def wait(self, timeout: float) -> bool:
        """Block up to `timeout` seconds; True when something in the folders changed."""
        if self.fd is not None:
            ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
            changed = False
            if ready:
                with contextlib.suppress(BlockingIOError):
                    while os.read(self.fd, 65536):
                        changed = True
            self._add_missing()
            return changed
        end = time.monotonic() + max(0.0, timeout)
        while True:
            sig = self._stat_signature()
            if sig != self._signature:
                self._signature = sig
                return True
            left = end - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(FALLBACK_POLL, left))

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> FolderWatch:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
