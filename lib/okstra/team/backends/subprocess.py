"""The `cli-wrapper` backend: each worker a detached background process, no pane (DESIGN §6).

A worker runs in its own session and process group (so teardown can signal
the whole group and a closed terminal does not take it down), with stdin
from /dev/null. `worker-run` writes the provider's output to the dispatch log
itself and echoes it on stdout for a pane; here stdout goes to /dev/null (no
doubled log) and stderr, its own messages, is appended to the dispatch log. There is nothing
to close: the pane count is 0 and that is fine.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from okstra.core import proc
from okstra.team.backends.base import Backend, Closed, Launched, LaunchSpec, bad_pane_id


@dataclass
class SubprocessBackend(Backend):
    name = "cli-wrapper"
    has_panes = False

    def check_pane_id(self, value: str, source: str) -> str:
        raise bad_pane_id(self.name, value, source)  # this backend records no panes

    def launch(self, specs: Sequence[LaunchSpec]) -> list[Launched]:
        launched = []
        env = {**os.environ, **self.env}
        for spec in specs:
            spec.log_path.parent.mkdir(parents=True, exist_ok=True)
            with open(os.devnull, "wb") as null, open(spec.log_path, "ab") as log:  # a stream, appended
                child = proc.spawn(spec.argv, cwd=spec.cwd, env=env, stdout=null, stderr=log, new_session=True)
            launched.append(Launched(spec, None, child.pid))
        return launched

    def close(self, pane_ids: Sequence[str], *, dry_run: bool = False) -> Closed:
        for pane_id in pane_ids:
            self.check_pane_id(pane_id, "paneId")
        return Closed()
