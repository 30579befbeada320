"""The launch gate: the workers team-dispatch starts begin their work once it has returned.

team-dispatch starts sixteen worker-runs at once, and on two cores their start-up
(an interpreter, okstra's modules, the provider CLI) would take the CPU from the
command that started them: the lead would wait for the last few milliseconds of
its work, stretched twentyfold (DESIGN §13). So team-dispatch closes its run's
gate (`hold`: an exclusive flock) before it starts any worker and keeps it closed
until it exits; each worker-run it started finds the gate's path in `ENV` and
waits for it (`pass_through`) before anything else.

- The kernel releases a flock when its holder exits or is killed, so a dead
  team-dispatch never holds a worker back; a worker waits `WAIT_MAX` at most.
- A worker-run started any other way (no `ENV`, or no gate file) does not wait.
- Imports nothing but the standard library's smallest modules: it runs first.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Mapping
from pathlib import Path

ENV = "OKSTRA_LAUNCH_GATE"
WAIT_MAX = 10.0
_POLL = 0.01


def hold(path: Path) -> None:
    """Close the gate at `path` until this process exits: the file stays open on purpose,
    and not across exec (a worker started from here must not inherit it)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)


def pass_through(environ: Mapping[str, str] = os.environ) -> bool:
    """Wait until the gate named in `environ` is open (WAIT_MAX at most). True when it was
    found closed and this waited; False when there was nothing to wait for."""
    path = environ.get(ENV)
    if not path:
        return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        deadline = time.monotonic() + WAIT_MAX
        waited = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return waited
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return waited
                waited = True
                time.sleep(_POLL)
    finally:
        os.close(fd)
