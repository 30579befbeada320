"""Run one dispatch: the provider CLI as a child, a heartbeat, the result, the record (DESIGN §5).

`run()` is what a pane or a background process executes for one dispatch
attempt. It marks the record `in-progress` (startedAt, its own pid, pgid and
process start time, livenessMode "heartbeat" + livenessArtifact), runs the
provider command in its own process group with stdin from /dev/null and the
project root (or, in an isolated run, the implementer's own git worktree) as working
directory, rewrites the heartbeat file every second
while the child lives, tees the child's output to the dispatch log and to its
own stdout, and records token usage and the terminal status with exit code
and reason.

The provider's own events are read line by line as they arrive
(`output.parse_event`): the heartbeat carries when the provider last printed
an event and what it was, so a stalled or retrying CLI is seen while the
wrapper's own heart still beats (docs/DESIGN.md §5).

The result file is the worker's: one the worker wrote during the run is kept
byte for byte. The CLI's final message goes to the answer file of the
attempt and becomes the result only when the worker wrote none; neither is
an `error` that says so. The record also keeps the model the CLI says served,
the tool calls it was denied, and where the answer went.

SIGTERM, SIGHUP and SIGINT are forwarded to the child's process group; after
a short grace the group is killed (`processes.term_then_kill`), the record
says `error` with "terminated by SIG…", and `run` says which signal; the
command exits 128 + its number. `run` returns a `Finished` verdict; it prints
nothing (DESIGN §1).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shlex
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO

from okstra.core import fsio, paths, proc
from okstra.core.clock import now_iso
from okstra.core.errors import OkstraError, RefusedError
from okstra.model import team_state
from okstra.model.catalog import Catalog
from okstra.model.dispatch import COMPLETED, ERROR, IN_PROGRESS, Dispatch
from okstra.model.layout import Run, RunLayout
from okstra.team import output, processes, worktrees

HEARTBEAT_EVERY = 1.0  # seconds between heartbeat rewrites
KILL_GRACE = 2.0  # seconds between forwarding a signal and SIGKILL
DRAIN_GRACE = 2.0  # seconds to keep reading after the child exited (grandchildren holding the pipes)
FORWARDED = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)

# The child's environment: the write-guard hook and the worker's own tools read these.
ENV_RUN_ID = "OKSTRA_RUN_ID"
ENV_WORKER_ID = "OKSTRA_WORKER_ID"
ENV_WORKER_ROLE = "OKSTRA_WORKER_ROLE"
ENV_PROJECT_ROOT = "OKSTRA_PROJECT_ROOT"
ENV_RESULT_PATH = "OKSTRA_RESULT_PATH"
ENV_EVIDENCE_DIR = "OKSTRA_EVIDENCE_DIR"


@dataclass(frozen=True)
class Plan:
    """Everything decided before anything is written: refusals happen while building it."""

    layout: RunLayout
    team_state_path: Path
    dispatch: Dispatch
    argv: list[str]
    output_format: str
    result_path: Path
    log_path: Path
    heartbeat_path: Path
    answer_path: Path  # the CLI's final message (codex writes it through -o itself)
    evidence_dir: Path
    cli_model: str
    workdir: Path | None = None  # the provider's working directory: the project, or the worker's worktree
    # Called once the dispatch is marked in-progress, just before the provider starts: what
    # it writes (the scope snapshot, DESIGN §10) is written only after every check that can
    # refuse has passed, so a refused worker-run changes nothing on disk (DESIGN §14).
    at_start: Callable[[], None] | None = None
    # Extra fields for the terminal record, computed just before it is written (the
    # scope verdict, DESIGN §10): nothing changes a dispatch after it is terminal.
    at_end: Callable[[], dict[str, Any]] | None = None
    provider_env: tuple[tuple[str, str], ...] = ()


def prepare(run: Run, catalog: Catalog, worker_id: str, attempt: int | None = None) -> Plan:
    """Read the dispatch record, refuse what must not run, build the command."""

    root, layout, state_path = run.root, run.layout, run.team_state_path
    dispatch = team_state.load(state_path).find(worker_id, attempt)
    where = f"dispatch {worker_id!r} attempt {dispatch.attempt}"
    if dispatch.terminal:
        raise RefusedError(f"{where} is already {dispatch.status}", hint="dispatch a new attempt to run it again")
    if dispatch.status == IN_PROGRESS and dispatch.pid and processes.matches(dispatch.pid, dispatch.pid_start_time):
        raise RefusedError(f"{where} is already running as pid {dispatch.pid}")
    if not dispatch.result_path:
        raise RefusedError(f"{where} has no recorded resultPath", hint="re-dispatch it so the record names its result file")
    manifest = run.manifest
    # The translator's result is the report's translation sidecar (one naming rule in model.layout).
    translation = (
        layout.report_translation(manifest.task_type, manifest.report_number, manifest.report_language)
        if manifest.report_language
        else None
    )
    result_path = _own_file(
        paths.resolve_inside(root, dispatch.result_path, source=f"{state_path}: {where} resultPath"),
        layout.results_dir,
        f"{state_path}: {where} resultPath",
        also=translation,
    )
    log_path = (
        _own_file(
            paths.resolve_inside(root, dispatch.log_path, source=f"{state_path}: {where} logPath"),
            layout.logs_dir,
            f"{state_path}: {where} logPath",
        )
        if dispatch.log_path
        else layout.log_path(worker_id, dispatch.attempt)
    )
    if not dispatch.prompt_path:
        raise RefusedError(f"{where} has no recorded promptPath")
    prompt_path = paths.resolve_inside(root, dispatch.prompt_path, source=f"{state_path}: {where} promptPath")
    prompt = fsio.read_text(prompt_path, what="prompt file")
    provider = catalog.provider(dispatch.provider)
    workdir = worktrees.tree_of(layout, worker_id) or root  # an isolated implementer runs in its own worktree
    model = provider.model(dispatch.model_id)
    answer_path = layout.answer_scratch_path(worker_id, dispatch.attempt)
    return Plan(
        layout=layout,
        team_state_path=state_path,
        dispatch=dispatch,
        argv=provider.argv(model, prompt, answer_path, workdir),
        workdir=workdir,
        output_format=provider.output_format,
        result_path=result_path,
        log_path=log_path,
        heartbeat_path=layout.heartbeat_path(worker_id, dispatch.attempt),
        answer_path=answer_path,
        evidence_dir=layout.evidence_dir(worker_id),
        cli_model=model.cli_model,
        provider_env=provider.env,
    )


def _own_file(path: Path, folder: Path, source: str, also: Path | None = None) -> Path:
    """worker-run writes only inside its run's folder (or the one file `also` names), whatever
    the team state says: a resultPath or logPath elsewhere (a sidecar, a state file) is refused
    (DESIGN §10; the rule is `core.paths.own_file`, shared with the report renderers)."""
    return paths.own_file(
        path, folder, source=source, hint="okstra writes it there; re-dispatch the worker", also=(also,) if also else ()
    )


def child_env(plan: Plan, base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env.update(dict(plan.provider_env))  # the CLI's own knobs, e.g. its retry bound
    env.update(
        {
            ENV_RUN_ID: plan.layout.run_id,
            ENV_WORKER_ID: plan.dispatch.worker_id,
            ENV_WORKER_ROLE: plan.dispatch.role,
            ENV_PROJECT_ROOT: str(plan.layout.project_root),
            ENV_RESULT_PATH: str(plan.result_path),
            ENV_EVIDENCE_DIR: str(plan.evidence_dir),
        }
    )
    return env


def _shown(argv: list[str], limit: int = 60) -> str:
    """The command line for the log, long values (the prompt) shortened."""
    return shlex.join(a if len(a) <= limit else f"<{len(a)} chars>" for a in argv)


class _Signals:
    """Remember forwarded signals and wake the select loop through a pipe."""

    def __init__(self) -> None:
        self.received: int | None = None
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        os.set_blocking(self.write_fd, False)
        self._old: dict[int, object] = {}
        self._old_wakeup = -1

    def _handle(self, signum: int, _frame: object) -> None:
        if self.received is None:
            self.received = signum

    def __enter__(self) -> _Signals:
        for sig in FORWARDED:
            self._old[sig] = signal.signal(sig, self._handle)
        self._old_wakeup = signal.set_wakeup_fd(self.write_fd, warn_on_full_buffer=False)
        return self

    def __exit__(self, *_: object) -> None:
        signal.set_wakeup_fd(self._old_wakeup)
        for sig, old in self._old.items():
            signal.signal(sig, old)  # type: ignore[arg-type]
        os.close(self.read_fd)
        os.close(self.write_fd)


class _Activity:
    """The provider's own events, read line by line as its output arrives (docs/DESIGN.md §5)."""

    MAX_LINE = 1 << 20  # a longer partial line is read as one event and dropped (a 100 MB line is no crash)

    def __init__(self, output_format: str) -> None:
        self.output_format = output_format
        self.partial = {"stdout": bytearray(), "stderr": bytearray()}
        self.at: str | None = None
        self.last: output.Event | None = None
        # The current run of retries (retry events with no progress between): liveness
        # judges `retrying` by how long it lasts, not by one reconnect (DESIGN §5).
        self.retries = 0
        self.retrying_since: str | None = None
        self.last_retry: output.Event | None = None

    def feed(self, stream: str, chunk: bytes) -> None:
        buf = self.partial[stream]
        buf.extend(chunk)
        if b"\n" not in chunk:
            if len(buf) > self.MAX_LINE:
                self._take(stream, bytes(buf[:4096]))
                buf.clear()
            return
        *lines, rest = buf.split(b"\n")
        for line in lines:
            self._take(stream, line)
        self.partial[stream] = bytearray(rest)

    def flush(self) -> None:
        for stream, buf in self.partial.items():
            if buf:
                self._take(stream, bytes(buf[:4096]))
                buf.clear()

    def _take(self, stream: str, line: bytes) -> None:
        event = output.parse_event(self.output_format, line, stream)
        if event is not None and event.activity:
            self.at = now_iso()
            self.last = event
            if event.kind == output.RETRY:
                self.retrying_since = self.retrying_since or self.at
                self.retries += 1
                self.last_retry = event
            elif event.progress:
                self.retries, self.retrying_since, self.last_retry = 0, None, None

    @property
    def described(self) -> str | None:
        return f"{self.last.kind}: {self.last.text}" if self.last else None


@dataclass
class _Captured:
    stdout: bytearray
    stderr: bytearray
    activity: _Activity
    returncode: int | None = None


def _wait(child: Any, timeout: float) -> int | None:
    """The child's return code once it exits within `timeout` seconds, else None."""
    end = time.monotonic() + timeout
    while (code := child.poll()) is None and time.monotonic() < end:
        time.sleep(0.01)
    return code


def _stop_child(child: Any, signum: int) -> int:
    """Forward `signum` to the child's group, SIGKILL it after KILL_GRACE (processes.term_then_kill)."""
    processes.term_then_kill(
        lambda sig: processes.kill_group(child.pid, sig),
        lambda: child.poll() is None,
        grace=KILL_GRACE,
        first=signum,
        kill_wait=KILL_GRACE,
    )
    processes.kill_group(child.pid, signal.SIGKILL)  # stragglers of the group too, even if the leader left
    code = child.poll()
    return code if code is not None else -signal.SIGKILL


def _beat(plan: Plan, child_pid: int | None, out_bytes: int, activity: _Activity | None = None) -> None:
    last = activity.last if activity else None
    fsio.write_json(
        plan.heartbeat_path,
        {
            "workerId": plan.dispatch.worker_id,
            "attempt": plan.dispatch.attempt,
            "pid": os.getpid(),
            "childPid": child_pid,
            "beatAt": now_iso(),
            "outputBytes": out_bytes,
            # The provider's own activity (not the wrapper's): liveness judges stalls and retries by it.
            "streaming": plan.output_format in output.STREAMING,
            "lastActivityAt": activity.at if activity else None,
            "lastEvent": {"kind": last.kind, "text": last.text} if last else None,
            "retrying": _retrying(activity),
        },
    )


def _retrying(activity: _Activity | None) -> dict[str, Any] | None:
    """The provider's current run of retries for the heartbeat: since when, how many, the last one."""
    if activity is None or not activity.retries or activity.last_retry is None:
        return None
    return {"since": activity.retrying_since, "count": activity.retries, "last": activity.last_retry.text}


def _spawn(plan: Plan) -> tuple[Any, int, int]:
    """Start the provider CLI: stdin /dev/null (proc.spawn's default), the project (or the
    worker's worktree) as working directory, a new session (its own process group).
    Returns (child, out fd, err fd)."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        child = proc.spawn(
            plan.argv,
            cwd=plan.workdir or plan.layout.project_root,
            env=child_env(plan),
            stdout=out_w,
            stderr=err_w,
            new_session=True,
        )
    except BaseException:
        for fd in (out_r, err_r):
            os.close(fd)
        raise
    finally:
        os.close(out_w)
        os.close(err_w)
    return child, out_r, err_r


def _pump(
    plan: Plan, child: Any, fds: tuple[int, int], signals: _Signals, captured: _Captured, log: BinaryIO, echo: BinaryIO | None
) -> None:
    """Tee the child's output to the log (and `echo`) and beat the heart until both streams
    close, a signal arrives, or the child is gone DRAIN_GRACE while something else holds the pipes."""
    sel = selectors.DefaultSelector()
    sel.register(fds[0], selectors.EVENT_READ, (captured.stdout, "stdout"))
    sel.register(fds[1], selectors.EVENT_READ, (captured.stderr, "stderr"))
    sel.register(signals.read_fd, selectors.EVENT_READ, None)
    open_streams = 2
    next_beat = time.monotonic() + HEARTBEAT_EVERY
    exited_at: float | None = None
    try:
        while open_streams and signals.received is None:
            now = time.monotonic()
            if exited_at is None and child.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > DRAIN_GRACE:
                break  # something else holds the pipes open; the child itself is gone
            if now >= next_beat:
                _beat(plan, child.pid, len(captured.stdout) + len(captured.stderr), captured.activity)
                next_beat = now + HEARTBEAT_EVERY
            timeout = max(0.0, min(next_beat - now, 0.25 if exited_at is not None else HEARTBEAT_EVERY))
            for key, _ in sel.select(timeout):
                if key.data is None:
                    with contextlib.suppress(BlockingIOError):
                        os.read(signals.read_fd, 64)
                    continue
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    open_streams -= 1
                    continue
                buffer, stream = key.data
                buffer.extend(chunk)
                captured.activity.feed(stream, chunk)
                log.write(chunk)
                if echo is not None:
                    with contextlib.suppress(OSError, ValueError):
                        echo.write(chunk)
                        echo.flush()
    finally:
        sel.close()
        captured.activity.flush()


def _reap(child: Any, signals: _Signals) -> int:
    """The child's return code once it is stopped; no process of its group is left behind."""
    if signals.received is not None:
        return _stop_child(child, signals.received)
    code = _wait(child, KILL_GRACE)
    if code is None:
        code = _stop_child(child, signal.SIGTERM)
    processes.kill_group(child.pid, signal.SIGKILL)  # leave no grandchild behind
    return code


def _supervise(plan: Plan, signals: _Signals, echo: BinaryIO | None) -> _Captured:
    """Run the child, tee its output, beat the heart; stop it when a signal arrives."""
    captured = _Captured(bytearray(), bytearray(), _Activity(plan.output_format))
    plan.log_path.parent.mkdir(parents=True, exist_ok=True)
    # The log is a stream, not a document: appended as output arrives (the atomic
    # rule of fsio is for documents other processes read whole).
    with open(plan.log_path, "ab", buffering=0) as log:
        log.write(f"=== {now_iso()} worker-run pid {os.getpid()}: {_shown(plan.argv)}\n".encode())
        if signals.received is not None:
            return captured
        child, out_r, err_r = _spawn(plan)
        try:
            _set(plan, lambda d: d.evolve(child_pid=child.pid, child_start_time=processes.start_time(child.pid)))
            _pump(plan, child, (out_r, err_r), signals, captured, log, echo)
            captured.returncode = _reap(child, signals)
        finally:
            os.close(out_r)
            os.close(err_r)
        log.write(f"=== {now_iso()} child exited {captured.returncode}\n".encode())
    return captured


def _exit_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def _set(plan: Plan, change: Callable[[Dispatch], Dispatch]) -> Dispatch:
    return team_state.update_dispatch(plan.team_state_path, plan.dispatch.worker_id, plan.dispatch.attempt, change)


def _mark_started(plan: Plan) -> Dispatch:
    me = os.getpid()

    def start(d: Dispatch) -> Dispatch:
        if d.terminal:  # another process finished it between our read and this lock
            raise RefusedError(f"dispatch {d.worker_id!r} attempt {d.attempt} is already {d.status}")
        return d.evolve(
            status=IN_PROGRESS,
            started_at=now_iso(),
            pid=me,
            pgid=os.getpgid(0),
            pid_start_time=processes.start_time(me),
            liveness_mode="heartbeat",
            liveness_artifact=plan.layout.relative(plan.heartbeat_path),
            log_path=plan.layout.relative(plan.log_path),
            finished_at=None,
            exit_code=None,
            reason=None,
            usage=None,
            child_pid=None,
            child_start_time=None,
            cli_model=plan.cli_model,
            served_model=None,
            answer_path=None,
            last_activity_at=None,
            last_event=None,
            denials=(),
        )

    return _set(plan, start)


@dataclass(frozen=True)
class Finished:
    """How a dispatch ended, as recorded; worker-run says it and picks the exit code."""

    worker_id: str
    status: str  # COMPLETED or ERROR
    reason: str | None = None
    result: str | None = None  # project-relative, when completed
    result_source: str | None = None  # "written by the worker" or "its final message", when completed
    signal: int | None = None  # the forwarded signal that stopped worker-run itself


def _signature(path: Path) -> tuple[int, int, int] | None:
    """What a file looks like now (None: absent or empty), to tell whether the worker wrote it."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns) if st.st_size else None


def run(
    handle: Run,
    catalog: Catalog,
    worker_id: str,
    attempt: int | None = None,
    *,
    echo: BinaryIO | None = None,
    at_start: Callable[[], None] | None = None,
    at_end: Callable[[], dict[str, Any]] | None = None,
) -> Finished:
    """Run one dispatch to its terminal status and say how it ended."""
    plan = replace(prepare(handle, catalog, worker_id, attempt), at_start=at_start, at_end=at_end)
    processes.become_subreaper()  # a setsid grandchild stays ours, so we can stop it (DESIGN §6)
    try:
        return _run(plan, worker_id, echo)
    except BaseException as exc:  # _run stops them before recording; on the way out of a failure, here
        processes.stop_own_descendants(KILL_GRACE)
        with contextlib.suppress(Exception):  # never left in-progress (e.g. disk full mid-run)
            _finish(plan, ERROR, reason=f"worker-run failed: {type(exc).__name__}: {exc}", exit_code=None)
        raise


def _run(plan: Plan, worker_id: str, echo: BinaryIO | None) -> Finished:
    with _Signals() as signals:
        _mark_started(plan)
        _beat(plan, None, 0)
        if plan.at_start is not None:
            plan.at_start()
        with contextlib.suppress(FileNotFoundError):
            plan.answer_path.unlink()
        plan.evidence_dir.mkdir(parents=True, exist_ok=True)
        result_before = _signature(plan.result_path)
        try:
            captured = _supervise(plan, signals, echo)
        except OkstraError as exc:  # e.g. the provider binary is not installed
            _finish(plan, ERROR, reason=exc.message, exit_code=None)
            raise
        # Every helper the provider left (a setsid grandchild too) is gone before the record
        # says the dispatch ended (DESIGN §6).
        processes.stop_own_descendants(KILL_GRACE)
        if signals.received is not None:
            name = signal.Signals(signals.received).name
            done = _conclude(plan, captured, result_before, killed_by=name)
            return replace(done, signal=signals.received)
        try:
            return _conclude(plan, captured, result_before)
        except (OSError, OkstraError) as exc:  # e.g. disk full writing the result: never left in-progress
            with contextlib.suppress(OSError, OkstraError):
                _finish(plan, ERROR, reason=f"could not record the result: {exc}", exit_code=None)
            raise


def _conclude(plan: Plan, captured: _Captured, result_before: object, *, killed_by: str | None = None) -> Finished:
    code = _exit_code(captured.returncode if captured.returncode is not None else -signal.SIGKILL)
    stdout = captured.stdout.decode("utf-8", "backslashreplace")
    stderr = captured.stderr.decode("utf-8", "backslashreplace")
    answer_file_text = None
    if plan.answer_path.exists():
        with contextlib.suppress(OSError, UnicodeDecodeError):
            answer_file_text = plan.answer_path.read_text(encoding="utf-8")
    outcome = output.parse(plan.output_format, stdout, stderr, code, answer_file_text)
    verdict = output.judge(outcome, code, stderr, killed_by=killed_by)
    # The result file is the worker's (docs/DESIGN.md §5): written during this run, it is kept as is.
    worker_wrote = _signature(plan.result_path) not in (None, result_before)
    answer_rel = None
    if outcome.answer is not None and killed_by is None:
        text = outcome.answer if outcome.answer.endswith("\n") else outcome.answer + "\n"
        fsio.atomic_write(plan.answer_path, text)
        answer_rel = plan.layout.relative(plan.answer_path)
    facts = dict(
        exit_code=code,
        usage=verdict.usage,
        served_model=outcome.served_model,
        denials=tuple(d.to_dict() for d in outcome.denials),
        answer_path=answer_rel,
        last_activity_at=captured.activity.at,
        last_event=captured.activity.described,
    )
    who = plan.dispatch.worker_id
    no_answer_only = not verdict.completed and (verdict.reason or "").startswith(output.NO_ANSWER)
    if killed_by is None and (verdict.completed or (no_answer_only and worker_wrote)):
        if not worker_wrote:  # the final message becomes the result only when the worker wrote none
            fsio.atomic_write(plan.result_path, fsio.read_text(plan.answer_path, what="answer file"))
        _finish(plan, COMPLETED, reason=None, **facts)  # the result lands before the record says completed
        source = "written by the worker" if worker_wrote else "its final message"
        return Finished(who, COMPLETED, result=plan.layout.relative(plan.result_path), result_source=source)
    reason = verdict.reason
    if no_answer_only and killed_by is None:
        reason = f"no result file and {reason}"
    _finish(plan, ERROR, reason=reason, **facts)
    return Finished(who, ERROR, reason=reason)


def _finish(plan: Plan, status: str, *, reason: str | None, exit_code: int | None, **facts: Any) -> None:
    extra = plan.at_end() if plan.at_end is not None else {}
    finished = now_iso()

    def done(d: Dispatch) -> Dispatch:
        if d.terminal:  # reclaimed or torn down meanwhile: their word stands
            return d
        return d.evolve(status=status, finished_at=finished, exit_code=exit_code, reason=reason, **facts, **extra)

    _set(plan, done)
