"""The `tmux-pane` backend: workers in real tmux panes (DESIGN §6).

This module is the one place that knows tmux's command line. Manners first:
the user's panes, windows and options are never changed, and the lead's pane
never gets narrower than `OKSTRA_TMUX_MIN_LEAD_WIDTH` (default 100 columns).

- Where panes go (`_place`): the first launch of a run puts a column beside
  the lead when the lead keeps at least the minimum width and the column gets
  a useful width (`MIN_WORKER_WIDTH`); the column holds as many panes as fit
  `MIN_PANE_ROWS` rows each. Everything else, and every later launch (a
  redispatch, a watcher), goes to okstra's own window of the run
  (`@okstra-window`, tiled), created without stealing the session's current
  window for longer than the call. The lead is split at most once per column.
- Only okstra's own window gets pane-border titles (`pane-border-status`),
  its own `remain-on-exit`; the lead's window keeps its options (its
  `remain-on-exit` is switched on for the split and put back in the same call).
- Several commands go in ONE client call, separated by a lone `;` argument.
  An error stops the rest of that call, so ids are checked against a fresh
  `list-panes` before a batch of `kill-pane`s. `split-window`/`new-window`
  without `-d` make the new pane the target of the commands that follow in the
  same call, so a pane is created, titled and tagged in one go (remain-on-exit
  set before a fast worker can exit); focus is given back at the end.
- Values are data: the pane command is `/bin/sh -c 'cd -- DIR && exec ARGV'`
  built with `shlex.join`; titles are format-expanded by tmux, so `#` is
  doubled; an argument ending in `;` would split the call, so it is escaped.
- Panes are tagged `@okstra-run`, `@okstra-worker`, `@okstra-kind` and
  closed only by their recorded id, after checking the id still carries this
  run's tag (tmux reuses `%N` numbers across servers).
- The lead's width before the first split is kept on the lead pane itself
  (`@okstra-lead-width`) and given back once no okstra pane is left beside it;
  after a close the okstra panes left are rebalanced (even column, tiled window).
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
TAG_WINDOW = "@okstra-window"  # on okstra's own window of a run: the run id
MIN_WORKER_WIDTH = 40  # a column narrower than this shows nothing useful: okstra's window instead
MIN_PANE_ROWS = 5
_NEW_PANE_FORMAT = "#{pane_id}\t#{pane_pid}"
_LIST_FORMAT = "\t".join(
    [
        "#{pane_id}",
        "#{window_id}",
        "#{" + TAG_RUN + "}",
        "#{" + TAG_KIND + "}",
        "#{" + TAG_LEAD_WIDTH + "}",
        "#{pane_dead}",
        "#{" + TAG_WINDOW + "}",
        "#{pane_height}",
    ]
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
    window_run: str = ""  # the run whose okstra window this pane is in ("" elsewhere)
    height: int = 0


@dataclass(frozen=True)
class LeadView:
    """What launch needs to know about the lead's surroundings, read once."""

    lead: str
    window_id: str
    session_id: str
    width: int
    height: int
    recorded_width: str
    active: str  # the lead window's active pane, given back focus at the end
    current_window: str  # the session's current window, shown again at the end
    window_remain: str  # the lead window's own remain-on-exit ("" = not set there)
    column: bool  # okstra panes already sit in the lead's window
    okstra_pane: str | None  # a pane of this run's okstra window, when it exists


@dataclass(frozen=True)
class PanePlacement:
    """How one pane is made: `head` creates it; `follows` = it continues from the pane made
    just before it (an explicit `-t` is added when that pane came from an earlier call)."""

    head: tuple[str, ...]
    follows: bool
    in_okstra_window: bool


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

    def unusable_here(self) -> str | None:
        if not proc.available("tmux"):
            return "tmux is not installed here (not on PATH)"
        lead = self.lead_pane_id or os.environ.get("TMUX_PANE")
        if not lead:
            return "no lead pane: not inside tmux ($TMUX_PANE is not set) and no --lead-pane"
        done = self.call([["display-message", "-p", "-t", lead, "#{pane_id}"]], check=False)
        if done.returncode != 0 or done.stdout.strip() != lead:
            return f"the lead pane {lead} is not on the tmux server: {done.stderr.strip() or 'no answer'}"
        return None

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
            if len(parts) == 8:
                height = int(parts[7]) if parts[7].isdigit() else 0
                rows[parts[0]] = PaneRow(parts[0], parts[1], parts[2], parts[3], parts[4], parts[5] == "1", parts[6], height)
        return rows

    # -- launch: look, place, build, run -------------------------------------------------
    def launch(self, specs: Sequence[LaunchSpec]) -> list[Launched]:
        if not specs:
            return []
        view = self._look(self.lead())
        places = self._place(view, len(specs))
        prelude, per_pane, restore = self._commands(view, specs, places)
        return self._run_batches(specs, places, prelude, per_pane, restore, view.lead)

    def _look(self, lead: str) -> LeadView:
        """The lead's window, size and focus, and where okstra's panes already are (two calls)."""
        probe = self.call(
            [
                [
                    "display-message",
                    "-p",
                    "-t",
                    lead,
                    "#{window_id}\t#{session_id}\t#{pane_width}\t#{pane_height}\t#{" + TAG_LEAD_WIDTH + "}",
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
        window_id, session_id, width, height, recorded_width = lines[0].split("\t")
        rows = self.panes()
        okstra_pane = next((r.pane_id for r in rows.values() if r.window_run == self.run_id), None)
        return LeadView(
            lead=lead,
            window_id=window_id,
            session_id=session_id,
            width=int(width),
            height=int(height),
            recorded_width=recorded_width,
            active=lines[1] if len(lines) > 1 and lines[1] else lead,
            current_window=lines[2] if len(lines) > 2 and lines[2] else window_id,
            window_remain=lines[3] if len(lines) > 3 else "",
            column=any(r.window_id == window_id and r.run_id for r in rows.values()),
            okstra_pane=okstra_pane,
        )

    def _place(self, view: LeadView, count: int) -> list[PanePlacement]:
        """Column beside the lead (first launch, when the lead keeps its minimum), else okstra's window."""
        keep = max(settings.tmux_min_lead_width(), view.width // 2)
        column_width = view.width - 1 - keep
        beside = 0
        if not view.column and column_width >= MIN_WORKER_WIDTH:
            beside = min(count, max(1, (view.height + 1) // (MIN_PANE_ROWS + 1)))
        places = []
        rows = (view.height - (beside - 1)) // beside if beside else 0
        remaining = view.height
        for i in range(beside):
            if i == 0:
                head = ("split-window", "-h", "-l", str(column_width), "-t", view.lead)
            else:
                head = ("split-window", "-v", "-l", str(remaining - rows - 1))
                remaining -= rows + 1
            places.append(PanePlacement(head, i > 0, False))
        for i in range(count - beside):
            if i == 0 and view.okstra_pane is None:
                head = ("new-window", "-t", f"{view.session_id}:", "-n", f"okstra {self.run_id}")
                places.append(PanePlacement(head, False, True))
            elif i == 0:
                places.append(PanePlacement(("split-window", "-t", view.okstra_pane), False, True))
            else:
                places.append(PanePlacement(("split-window",), True, True))
        return places

    def _commands(
        self, view: LeadView, specs: Sequence[LaunchSpec], places: Sequence[PanePlacement]
    ) -> tuple[list[list[str]], list[list[list[str]]], list[list[str]]]:
        """(prelude, the commands of each pane, the restore that ends the last call)."""
        lead = view.lead
        in_column = any(not p.in_okstra_window for p in places)
        prelude: list[list[str]] = []
        if in_column:
            prelude.append(["set-option", "-w", "-t", lead, "remain-on-exit", "on"])
            if not view.recorded_width:
                prelude.append(["set-option", "-p", "-t", lead, TAG_LEAD_WIDTH, str(view.width)])
        env_args = [arg for k, v in self.env.items() for arg in ("-e", f"{k}={v}")]
        per_pane = []
        for spec, place in zip(specs, places, strict=True):
            commands = [
                [*place.head, "-P", "-F", _NEW_PANE_FORMAT, *env_args, *shell_command(spec.argv, spec.cwd)],
                ["set-option", "-p", "remain-on-exit", "on"],
                ["set-option", "-p", TAG_RUN, self.run_id],
                ["set-option", "-p", TAG_WORKER, spec.worker_id],
                ["set-option", "-p", TAG_KIND, spec.kind],
                ["select-pane", "-T", format_literal(spec.title)],
            ]
            if place.in_okstra_window:
                if place.head[0] == "new-window":
                    commands += _okstra_window_options(self.run_id)
                commands.append(["select-layout", "tiled"])  # room for the next split, even panes
            per_pane.append(commands)
        restore: list[list[str]] = []
        if in_column:
            restore.append(
                ["set-option", "-w", "-t", lead, "remain-on-exit", view.window_remain]
                if view.window_remain
                else ["set-option", "-wu", "-t", lead, "remain-on-exit"]
            )
        restore.append(["select-pane", "-t", view.active])
        if any(p.in_okstra_window for p in places):  # a new window became current: show the user's again
            restore.append(["select-window", "-t", view.current_window])
        return prelude, per_pane, restore

    def _run_batches(
        self,
        specs: Sequence[LaunchSpec],
        places: Sequence[PanePlacement],
        prelude: list[list[str]],
        per_pane: list[list[list[str]]],
        restore: list[list[str]],
        lead: str,
    ) -> list[Launched]:
        """As few client calls as tmux's message size allows (usually one)."""
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
                    hint="the started panes are recorded; make room in the tmux window and dispatch again",
                )
            batch, batch_specs, size = [], [], 0

        for spec, place, commands in zip(specs, places, per_pane, strict=True):
            cost = _size(commands)
            if batch_specs and size + cost > MAX_CALL_BYTES:
                flush(final=False)
            if not batch_specs and place.follows and launched:
                # The pane this one continues from was made by an earlier call: name it.
                head = list(place.head)
                commands = [[*head, "-t", launched[-1].pane_id or lead, *commands[0][len(head) :]], *commands[1:]]
            batch += commands
            batch_specs.append(spec)
            size += cost
        flush(final=True)
        return launched

    # -- close ---------------------------------------------------------------------------
    def tagged(self, kind: str) -> list[str]:
        return [row.pane_id for row in self.panes().values() if row.run_id == self.run_id and row.kind == kind]

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
            done = self.call(commands + restore + self._rebalance(rows, set(mine)), check=False)
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

    def _rebalance(self, rows: dict[str, PaneRow], closing: set[str]) -> list[list[str]]:
        """After a close: okstra's windows tiled again, and the column beside the lead even.

        Only okstra's panes are resized (in the lead's window, the column's heights among
        themselves), so the user's panes keep their sizes."""
        commands: list[list[str]] = []
        windows = {r.window_id for r in rows.values() if r.window_run and r.pane_id in closing}
        for window in sorted(windows):
            if any(r.window_id == window and r.pane_id not in closing for r in rows.values()):
                commands.append(["select-layout", "-t", window, "tiled"])
        lead = self.lead_pane_id or os.environ.get("TMUX_PANE")
        if lead in rows and any(rows[p].window_id == rows[lead].window_id for p in closing if p in rows):
            column = [r for r in rows.values() if r.window_id == rows[lead].window_id and r.run_id and not r.window_run]
            kept = [r for r in column if r.pane_id not in closing]
            if kept and len(kept) < len(column):
                total = sum(r.height for r in column) + len(column) - 1
                each = (total - (len(kept) - 1)) // len(kept)
                commands += [["resize-pane", "-t", r.pane_id, "-y", str(each)] for r in kept[:-1]]
        return commands


def _okstra_window_options(run_id: str) -> list[list[str]]:
    """okstra's own window: tagged, its panes kept after exit, titles on the borders (only here)."""
    return [
        ["set-option", "-w", TAG_WINDOW, run_id],
        ["set-option", "-w", "remain-on-exit", "on"],
        ["set-option", "-w", "pane-border-status", "top"],
        ["set-option", "-w", "pane-border-format", " #{pane_title} "],
    ]


def _size(commands: Sequence[Sequence[str]]) -> int:
    """Bytes of `commands` in tmux's message: each argument and its NUL, a `;` between commands."""
    return sum(len(tmux_arg(a).encode()) + 1 for c in commands for a in c) + 2 * len(commands)
