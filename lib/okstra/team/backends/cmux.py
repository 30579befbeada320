"""The `cmux-pane` backend: workers in cmux terminal surfaces (DESIGN §6, ecosystem.md §5).

cmux's CLI changes between releases, so this adapter stays thin: the first
worker gets a new pane to the right of the lead (`new-pane --type terminal
--direction right --command CMD`), the others become terminal surfaces in that
pane (`new-surface --type terminal --pane P --command CMD`); both answer
`OK surface:<n> pane:<n> workspace:<n>`. `--command` types the command into
the surface's shell, so the surface stays open after the worker exits until
it is closed by its recorded id (`close-surface --surface S`). The command is
built with `shlex.join`; okstra's environment travels as `env K=V` data.
cmux balances its splits itself, so there is no lead width to give back.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from okstra.core import proc
from okstra.core.errors import ProcessError
from okstra.team.backends.base import Backend, Closed, Launched, LaunchSpec, PartialLaunch, bad_pane_id

SURFACE_ID = re.compile(r"^(surface:[0-9]+|[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})$")
_SURFACE_REF = re.compile(r"\bsurface:[0-9]+\b")
_PANE_REF = re.compile(r"\bpane:[0-9]+\b")
_GONE = ("not found", "not_found", "no such")


def command_line(spec: LaunchSpec, env: dict[str, str]) -> str:
    assignments = [f"{k}={v}" for k, v in env.items()]
    return f"cd -- {shlex.quote(os.fspath(spec.cwd))} && " + shlex.join(["env", *assignments, *spec.argv])


def _refs(text: str) -> tuple[str | None, str | None]:
    """(surface, pane) from `OK surface:7 pane:2 workspace:1`, or from a JSON answer."""
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        surface = doc.get("surface_ref") or doc.get("surface")
        pane = doc.get("pane_ref") or doc.get("pane")
        return (str(surface) if surface else None, str(pane) if pane else None)
    surface, pane = _SURFACE_REF.search(text), _PANE_REF.search(text)
    return (surface.group(0) if surface else None, pane.group(0) if pane else None)


@dataclass
class CmuxBackend(Backend):
    name = "cmux-pane"
    has_panes = True

    def call(self, args: Sequence[str], *, check: bool = True) -> proc.Completed:
        return proc.run(["cmux", *args], check=check, timeout=30)

    def unusable_here(self) -> str | None:
        return "cmux is not installed here (not on PATH)" if not proc.available("cmux") else None

    def check_pane_id(self, value: str, source: str) -> str:
        if not isinstance(value, str) or not SURFACE_ID.match(value):
            raise bad_pane_id(self.name, value, source)
        return value

    def launch(self, specs: Sequence[LaunchSpec]) -> list[Launched]:
        launched: list[Launched] = []
        pane: str | None = None
        for spec in specs:
            command = command_line(spec, self.env)
            if pane is None:
                args = ["new-pane", "--type", "terminal", "--direction", "right", "--command", command]
            else:
                args = ["new-surface", "--type", "terminal", "--pane", pane, "--command", command]
            done = self.call(args, check=False)
            surface, new_pane = _refs(done.stdout)
            if done.returncode != 0 or surface is None:
                why = (done.stderr or done.stdout).strip() or f"exit {done.returncode}"
                raise PartialLaunch(f"cmux started {len(launched)} of {len(specs)} surfaces: {why}", launched)
            pane = pane or new_pane
            launched.append(Launched(spec, surface, None))
        return launched

    def _open_surfaces(self) -> set[str] | None:
        """Every surface ref open now (`list-panes`, then `list-pane-surfaces` per pane); None
        when cmux cannot say (an older CLI): then a dry run lists every recorded id."""
        panes = self.call(["list-panes"], check=False)
        if panes.returncode != 0:
            return None
        found: set[str] = set()
        for pane in dict.fromkeys(_PANE_REF.findall(panes.stdout)):
            done = self.call(["list-pane-surfaces", "--pane", pane], check=False)
            if done.returncode == 0:
                found.update(_SURFACE_REF.findall(done.stdout))
        return found

    def close(self, pane_ids: Sequence[str], *, dry_run: bool = False) -> Closed:
        for pane_id in pane_ids:
            self.check_pane_id(pane_id, "paneId")
        wanted = list(dict.fromkeys(pane_ids))
        if dry_run:
            # Only surfaces still open, so the count equals what a real close closes (DESIGN §6).
            open_now = self._open_surfaces()
            if open_now is None:
                return Closed(tuple(wanted))
            still = tuple(s for s in wanted if s in open_now or not _SURFACE_REF.fullmatch(s))
            return Closed(still, tuple(s for s in wanted if s not in still))
        closed, gone = [], []
        for surface in wanted:
            done = self.call(["close-surface", "--surface", surface], check=False)
            if done.returncode == 0:
                closed.append(surface)
            elif any(word in (done.stderr + done.stdout).lower() for word in _GONE):
                gone.append(surface)
            else:
                raise ProcessError(f"cmux close-surface --surface {surface} exited {done.returncode}: {done.stderr.strip()}")
        return Closed(tuple(closed), tuple(gone))
