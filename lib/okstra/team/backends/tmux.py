"""The `tmux-pane` backend: workers in real tmux panes beside the lead's (DESIGN §6).

This module is the one place that knows tmux's command line. What it relies
on (ecosystem.md §6, verified on tmux 3.3a):

- Several commands go in ONE client call, separated by a lone `;` argument.
  An error stops the rest of that call, so ids are checked against a fresh
  `list-panes` before a batch of `kill-pane`s.
- `split-window` without `-d` makes the new pane the target of the commands
  that follow it in the same call, so a whole column of panes is created,
  titled and tagged in one call; focus is given back at the end.
- `remain-on-exit` is switched on for the lead's window before the first
  split and on each new pane right after it, inside the same call, so a
  worker that exits at once still leaves its pane and exit status; the
  window's own value is then put back.
- Values are data: the pane command is `/bin/sh -c 'cd -- DIR && exec ARGV'`
  built with `shlex.join`; titles are format-expanded by tmux, so `#` is
  doubled; an argument ending in `;` would split the call, so it is escaped.
- Panes are tagged `@okstra-run`, `@okstra-worker`, `@okstra-kind` and
  closed only by their recorded id, after checking the id still carries this
  run's tag (tmux reuses `%N` numbers across servers).
- The lead's width before the first split is kept on the lead pane itself
  (`@okstra-lead-width`) and given back once no okstra pane is left beside it.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from okstra.core import proc, settings
from okstra.core.errors import InputError, ProcessError
from okstra.team.backends.base import Backend, Closed, Launched, LaunchSpec, PartialLaunch, bad_pane_id

PANE_ID = re.compile(r"^%[0-9]+$")
MAX_CALL_BYTES = 15500  # tmux sends one call's arguments as one message (about 16,300 bytes at most on 3.3a)
TAG_RUN = "@okstra-run"
TAG_WORKER = "@okstra-worker"
TAG_KIND = "@okstra-kind"
TAG_LEAD_WIDTH = "@okstra-lead-width"
_NEW_PANE_FORMAT = "#{pane_id}\t#{pane_pid}"
_LIST_FORMAT = "\t".join(
    ["#{pane_id}", "#{window_id}", "#{" + TAG_RUN + "}", "#{" + TAG_KIND + "}", "#{" + TAG_LEAD_WIDTH + "}", "#{pane_dead}"]
)


def tmux_arg(value: str) -> str:
    """An argument tmux takes literally: a trailing `;` would end the command."""
    return value[:-1] + "\\;" if value.endswith(";") else value


def format_literal(value: str) -> str:
    """A value for an option tmux format-expands (titles): `#` is doubled."""
    return value.replace("#", "##")


def chain(commands: Sequence[Sequence[str]]) -> list[str]:
    """Several tmux commands as one argv for one client call."""
    out: list[str] = []
    for i, command in enumerate(commands):
        if i:
            out.append(";")
        out.extend(tmux_arg(str(a)) for a in command)
    return out


def shell_command(argv: Sequence[str], cwd: os.PathLike[str] | str) -> list[str]:
    """The pane's command: POSIX sh, every value quoted, the worker exec'd (it is the pane's pid)."""
    return ["/bin/sh", "-c", f"cd -- {shlex.quote(os.fspath(cwd))} && exec {shlex.join(list(argv))}"]


@dataclass(frozen=True)
class PaneRow:
    pane_id: str
    window_id: str
    run_id: str
    kind: str
    lead_width: str
    dead: bool


@dataclass
class TmuxBackend(Backend):
    name = "tmux-pane"
    has_panes = True

    # -- the one way to talk to tmux -------------------------------------------------
    def base_argv(self) -> list[str]:
        socket = settings.tmux_socket()
        return ["tmux", "-S", socket] if socket else ["tmux"]

    def call(self, commands: Sequence[Sequence[str]], *, check: bool = True) -> proc.Completed:
        """One tmux client call running `commands` in order."""
        return proc.run([*self.base_argv(), *chain(commands)], check=check, timeout=30)

    # -- ids ---------------------------------------------------------------------------
    def check_pane_id(self, value: str, source: str) -> str:
        if not isinstance(value, str) or not PANE_ID.match(value):
            raise bad_pane_id(self.name, value, source)
        return value

    def lead(self) -> str:
        lead = self.lead_pane_id or os.environ.get("TMUX_PANE")
        if not lead:
            raise InputError(
                "no lead pane: the run manifest has no leadPaneId and $TMUX_PANE is not set",
                hint="run the lead inside tmux, or prepare the run with the cli-wrapper backend",
            )
        return self.check_pane_id(lead, "lead pane id")

    def panes(self) -> dict[str, PaneRow]:
        """Every pane on the server with okstra's tags (one call)."""
        done = self.call([["list-panes", "-a", "-F", _LIST_FORMAT]], check=False)
        if done.returncode != 0:
            if "no server running" in done.stderr or "error connecting" in done.stderr:
                return {}
            raise ProcessError(f"tmux list-panes exited {done.returncode}: {done.stderr.strip()}")
        rows: dict[str, PaneRow] = {}
        for line in done.stdout.splitlines():
            parts = line.split("\t")
            if len(parts) == 6:
                rows[parts[0]] = PaneRow(parts[0], parts[1], parts[2], parts[3], parts[4], parts[5] == "1")
        return rows

    # -- launch ------------------------------------------------------------------------
    def launch(self, specs: Sequence[LaunchSpec]) -> list[Launched]:
        if not specs:
            return []
        lead = self.lead()
        probe = self.call(
            [
                [
                    "display-message",
                    "-p",
                    "-t",
                    lead,
                    "#{window_id}\t#{session_id}\t#{pane_width}\t#{pane_height}\t#{window_height}\t#{" + TAG_LEAD_WIDTH + "}",
                ],
                ["list-panes", "-t", lead, "-f", "#{pane_active}", "-F", "#{pane_id}"],
                ["list-windows", "-t", lead, "-f", "#{window_active}", "-F", "#{window_id}"],
                ["show-options", "-wqv", "-t", lead, "remain-on-exit"],
            ],
            check=False,
        )
        if probe.returncode != 0:
            raise InputError(
                f"lead pane {lead} is not on the tmux server: {probe.stderr.strip() or 'no answer'}",
                hint="check leadPaneId in the run manifest (or $TMUX_PANE) and OKSTRA_TMUX_SOCKET",
            )
        lines = probe.stdout.splitlines()
        window_id, session_id, width, height, window_height, recorded_width = lines[0].split("\t")
        active = lines[1] if len(lines) > 1 and lines[1] else lead
        current_window = lines[2] if len(lines) > 2 and lines[2] else window_id
        window_remain = lines[3] if len(lines) > 3 else ""

        prelude: list[list[str]] = [["set-option", "-w", "-t", lead, "remain-on-exit", "on"]]
        if not recorded_width:
            prelude.append(["set-option", "-p", "-t", lead, TAG_LEAD_WIDTH, width])
        # A column beside the lead; what does not fit goes to extra windows of the session.
        groups = _columns(len(specs), int(height), int(window_height))
        env_args = [arg for k, v in self.env.items() for arg in ("-e", f"{k}={v}")]
        per_pane: list[tuple[list[str] | None, list[list[str]]]] = []  # (split of the previous pane, or None; commands)
        index = 0
        for g, (count, column_height) in enumerate(groups):
            rows = (column_height - (count - 1)) // count
            remaining = column_height
            for i in range(count):
                spec = specs[index]
                index += 1
                continues = None
                if i == 0 and g == 0:
                    head = ["split-window", "-h", "-t", lead]
                elif i == 0:
                    head = ["new-window", "-t", f"{session_id}:", "-n", f"okstra {self.run_id}"]
                else:
                    continues = ["split-window", "-v", "-l", str(remaining - rows - 1)]
                    head = continues
                    remaining -= rows + 1
                tail = ["-P", "-F", _NEW_PANE_FORMAT, *env_args, *shell_command(spec.argv, spec.cwd)]
                per_pane.append(
                    (
                        continues,
                        [
                            [*head, *tail],
                            ["set-option", "-p", "remain-on-exit", "on"],
                            ["set-option", "-p", TAG_RUN, self.run_id],
                            ["set-option", "-p", TAG_WORKER, spec.worker_id],
                            ["set-option", "-p", TAG_KIND, spec.kind],
                            ["select-pane", "-T", format_literal(spec.title)],
                        ],
                    )
                )
        restore = [
            ["set-option", "-w", "-t", lead, "remain-on-exit", window_remain]
            if window_remain
            else ["set-option", "-wu", "-t", lead, "remain-on-exit"],
            ["select-pane", "-t", active],
        ]
        if len(groups) > 1:  # new windows became current: give the session its window back
            restore.append(["select-window", "-t", current_window])

        # As few client calls as tmux's message size allows (usually one): a call that
        # continues a column names the previous call's last pane as its target.
        launched: list[Launched] = []
        batch: list[list[str]] = list(prelude)
        batch_specs: list[LaunchSpec] = []
        size = _size(batch)

        def flush(final: bool) -> None:
            nonlocal batch, batch_specs, size
            done = self.call(batch + (restore if final else []), check=False)
            for spec, line in zip(batch_specs, done.stdout.splitlines(), strict=False):
                pane_id, _, pid = line.partition("\t")
                launched.append(Launched(spec, pane_id, int(pid) if pid.isdigit() else None))
            if done.returncode != 0 or len(done.stdout.splitlines()) < len(batch_specs):
                self.call(restore, check=False)
                raise PartialLaunch(
                    f"tmux started {len(launched)} of {len(specs)} panes: {done.stderr.strip() or 'no answer'}",
                    launched,
                    hint="the started panes are recorded; make room beside the lead pane and dispatch again",
                )
            batch, batch_specs, size = [], [], 0

        for spec, (continues, commands) in zip(specs, per_pane, strict=True):
            cost = _size(commands)
            if batch_specs and size + cost > MAX_CALL_BYTES:
                flush(final=False)
            if not batch_specs and continues is not None and launched:
                commands = [[*continues, "-t", launched[-1].pane_id or lead, *commands[0][len(continues) :]], *commands[1:]]
            batch += commands
            batch_specs.append(spec)
            size += cost
        flush(final=True)
        return launched

    # -- close ---------------------------------------------------------------------------
    def close(self, pane_ids: Sequence[str], *, dry_run: bool = False) -> Closed:
        for pane_id in pane_ids:
            self.check_pane_id(pane_id, "paneId")
        wanted = list(dict.fromkeys(pane_ids))
        if not wanted:
            return Closed()
        for _ in range(3):  # a pane that vanishes between list and kill: list again
            rows = self.panes()
            mine = [p for p in wanted if p in rows and rows[p].run_id == self.run_id]
            gone = tuple(p for p in wanted if p not in mine)
            if dry_run or not mine:
                return Closed(tuple(mine), gone)
            commands = [["kill-pane", "-t", p] for p in mine]
            restore = self._restore_lead(rows, set(mine))
            done = self.call(commands + restore, check=False)
            if done.returncode == 0:
                return Closed(tuple(mine), gone, lead_restored=bool(restore))
            # The kills come first in the call: when only the restore after them failed
            # (`resize-pane`: width too large), the panes are closed all the same and
            # must be reported as closed (DESIGN §6), with the failure as a warning.
            left = self.panes()
            if restore and not any(p in left and left[p].run_id == self.run_id for p in mine):
                why = done.stderr.strip() or f"exit {done.returncode}"
                return Closed(tuple(mine), gone, warnings=(f"the lead pane's width was not restored: {why}",))
        raise ProcessError(f"tmux kill-pane failed: {done.stderr.strip()}")

    def _restore_lead(self, rows: dict[str, PaneRow], closing: set[str]) -> list[list[str]]:
        """Give the lead its width back once no okstra pane is left in its window."""
        lead = self.lead_pane_id or os.environ.get("TMUX_PANE")
        if not lead or lead not in rows or not rows[lead].lead_width.isdigit():
            return []
        window = rows[lead].window_id
        left = [r for r in rows.values() if r.window_id == window and r.run_id and r.pane_id not in closing]
        if left:
            return []
        return [
            ["resize-pane", "-t", lead, "-x", rows[lead].lead_width],
            ["set-option", "-pu", "-t", lead, TAG_LEAD_WIDTH],
        ]


def _size(commands: Sequence[Sequence[str]]) -> int:
    """Bytes of `commands` in tmux's message: each argument and its NUL, a `;` between commands."""
    return sum(len(tmux_arg(a).encode()) + 1 for c in commands for a in c) + 2 * len(commands)


def _columns(count: int, lead_height: int, window_height: int) -> list[tuple[int, int]]:
    """Split `count` panes into groups: (panes, height) for the lead's column, then extra windows."""
    groups = []
    height = lead_height
    while count > 0:
        fit = max(1, (height + 1) // 2)  # one row per pane plus one border row between panes
        take = min(count, fit)
        groups.append((take, height))
        count -= take
        height = window_height  # a new window: the whole pane area
    return groups
