"""SIGKILL and disk-full matrix over every okstra command that writes (issue 15, DESIGN §5).

Two real runs are built step by step with the installed-style doors (bin/) on the fake
provider CLIs: an analysis run from `hooks-install` to `runs-prune`, and an isolated
implementation stage (approved plan, worktree, `stage-merge`, `stage-record`, `run-end`).
Every step is one writing door. For each, the world before it (project, git, HOME and
OKSTRA_ROOT) is kept; a trial puts it back at the same path, starts the door, and sends
SIGKILL to the door's process at a random moment of its run (an uncut run measures how
long it takes), or caps its file writes (RLIMIT_FSIZE, as a full disk). Afterwards:

- torn: every JSON document parses (and validates against its schema where the uncut
  run's version does), every JSONL line parses, config YAML parses, and every other file
  (Markdown, HTML, prompts) is byte for byte the old version or the version the uncut run
  wrote (digits and hex ids aside: times, pids and ids differ between runs);
- lost: every file that was there before and that the uncut run kept is still there;
- usable: the same door run again, then `team-status`, answer with exit 0, or 1/2 and one
  line that names the command (never 70, a signal or a traceback);
- orphans: once `team-teardown` ran, no process started by the trial is left.

Only the process is killed (as the kernel's OOM killer would): children it started live on,
as they would. `WRITERS` names every door that writes; a meta-test holds it to bin/.
"""

from __future__ import annotations

import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fixtures.runs import FAKES, REPO

MARK = "OKSTRA_HOSTILE_TRIAL"
# Doors that write nothing in a project (bash_policy's read-only doors are the others).
WRITE_NOTHING = {"stage-check": "reads git and the run's state, writes nothing"}
SCHEMAS = {
    "active-run.json": "active-run",
    "run-manifest.json": "run-manifest",
    "team-state.json": "team-state",
    "watchers.json": "watchers",
}


@dataclass
class Step:
    door: str  # the bin/ door this step exercises
    label: str
    argv: Callable[[World], list[str]]
    env: dict[str, str] = field(default_factory=dict)
    after: Callable[[World], None] | None = None  # what follows in a real run (waits) before the next step
    duration: float = 0.0


class World:
    """A project, its git, HOME and OKSTRA_ROOT under one folder that trials put back in place."""

    def __init__(self, base: Path, name: str, env: dict[str, str]) -> None:
        self.dir = base / name
        self.project = self.dir / "project"
        self.home = self.dir / "home"
        self.env = {
            **env,
            "HOME": str(self.home),
            "OKSTRA_ROOT": str(self.home / ".okstra"),
            "PATH": f"{FAKES}:{env['PATH']}",
            "PYTHONDONTWRITEBYTECODE": "1",
            "GIT_CONFIG_GLOBAL": str(self.dir / "home" / ".gitconfig"),
        }
        self.memo: dict[str, str] = {}
        self.servers: list = []  # tmux servers to kill at the end

    def run(self, argv: list[str], *, extra: dict[str, str] | None = None, check: bool = True) -> str:
        done = subprocess.run(
            argv, cwd=self.project, env={**self.env, **(extra or {})}, capture_output=True, timeout=120, check=False
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed while building the world: {done.stderr.decode()[-400:]}")
        return done.stdout.decode()

    def manifest(self) -> str:
        return self.memo["manifest"]


# ---------------------------------------------------------------- the two runs


def _git_project(world: World) -> None:
    world.project.mkdir(parents=True)
    world.home.mkdir(parents=True)
    (world.home / ".gitconfig").write_text("[user]\n\tname = t\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n")
    (world.project / ".gitignore").write_text(".okstra/\n")
    (world.project / "api" / "limiter").mkdir(parents=True)
    (world.project / "api" / "limiter" / "core.py").write_text("def take():\n    return True\n")
    (world.project / "api" / "limiter" / "shared.py").write_text("shared line\n")
    world.run(["git", "init", "-q"])
    world.run(["git", "add", "-A"])
    world.run(["git", "commit", "-qm", "initial"])


def _wait(world: World) -> None:
    world.run(["worker-wait", "--run-manifest", world.manifest(), "--timeout", "60"], check=False)


def _remember_bundle(world: World, out: str) -> None:
    world.memo["manifest"] = json.loads(out)["runManifestPath"]


def _report_paths(world: World) -> None:
    run_dir = Path(world.manifest()).parent
    data = next((world.project / run_dir / "reports").glob("final-report-*.data.json"))
    world.memo["data"] = str(data)
    world.memo["report"] = str(data).removesuffix(".data.json") + ".md"
    world.memo["html"] = str(data).removesuffix(".data.json") + ".html"


def _answers(world: World) -> str:
    doc = json.loads(Path(world.memo["data"]).read_text())
    return json.dumps({q["id"]: "yes, cover the tests too" for q in doc.get("openQuestions", [])})


def _export(world: World) -> None:
    """What the HTML view's Export downloads: the sidecar, answered differently."""
    sidecars = list((Path(world.memo["report"]).parent / "user-responses").glob("*.md"))
    from okstra.core import seal

    # The view exports the content without okstra's seal line (DESIGN §14).
    content = seal.open_text(sidecars[0].read_text(), sidecars[0].name, required=True)
    text = content.replace("yes, cover the tests too", "no, only the code")
    downloads = world.home / "Downloads"
    downloads.mkdir(exist_ok=True)
    (downloads / sidecars[0].name).write_text(text)
    world.memo["export"] = str(downloads / sidecars[0].name)


def _age_runs(world: World) -> None:
    """Every run two days old (kept by the trials' copies), so runs-prune --older-than 1d
    removes the same runs in the uncut run as in every trial."""
    past = time.time() - 2 * 86400
    for dirpath, dirnames, filenames in os.walk(world.project / ".okstra" / "runs"):
        for name in dirnames + filenames:
            os.utime(os.path.join(dirpath, name), (past, past), follow_symlinks=False)


def analysis_steps() -> list[Step]:
    brief = "Review api/limiter: should take() ever refuse? Acceptance: findings cite lines."
    return [
        Step("hooks-install", "hooks-install", lambda w: ["hooks-install", "--project", str(w.project)]),
        Step("okstra-config", "okstra-config set", lambda w: ["okstra-config", "set", "default-workers", "claude,codex"]),
        Step(
            "okstra-config",
            "okstra-config set global",
            lambda w: ["okstra-config", "set", "report-language", "ko", "--scope", "global"],
        ),
        Step(
            "render-bundle",
            "render-bundle",
            lambda w: [
                "render-bundle",
                "--task-key",
                "demo/limiter",
                "--task-type",
                "analysis",
                "--workers",
                "claude,codex",
                "--backend",
                "cli-wrapper",
                "--brief",
                brief,
                "--json",
            ],
        ),  # fmt: skip
        Step(
            "team-dispatch",
            "team-dispatch analysis",
            lambda w: ["team-dispatch", "--run-manifest", w.manifest(), "--round", "analysis"],
            after=_wait,
        ),
        Step("team-reclaim", "team-reclaim", lambda w: ["team-reclaim", "--run-manifest", w.manifest()]),
        Step(
            "round-prepare",
            "round-prepare",
            lambda w: ["round-prepare", "--run-manifest", w.manifest(), "--role", "report-writer"],
        ),
        Step(
            "team-dispatch",
            "team-dispatch report",
            lambda w: ["team-dispatch", "--run-manifest", w.manifest(), "--round", "report"],
            after=_wait,
        ),
        Step(
            "report-draft",
            "report-draft",
            lambda w: ["report-draft", "--run-manifest", w.manifest(), "--owner", "hostile"],
            after=_report_paths,
        ),
        Step("render-final-report", "render-final-report", lambda w: ["render-final-report", w.memo["data"]]),
        Step("report-finalize", "report-finalize", lambda w: ["report-finalize", "--run-manifest", w.manifest()]),
        Step(
            "render-report-views",
            "render-report-views",
            lambda w: ["render-report-views", w.memo["report"], "--output", w.memo["html"]],
        ),
        Step(
            "user-response-write",
            "user-response-write",
            lambda w: [
                "user-response-write",
                "--report",
                w.memo["report"],
                "--answers",
                _answers(w),
                "--analysis-review",
                '{"status": "accepted", "notes": "fine"}',
            ],
            after=_export,
        ),  # fmt: skip
        Step("user-response-import", "user-response-import", lambda w: ["user-response-import", w.memo["export"]]),
        Step(
            "team-teardown",
            "team-teardown",
            lambda w: ["team-teardown", "--run-manifest", w.manifest(), "--grace", "2"],
            after=_age_runs,
        ),
        Step("runs-prune", "runs-prune", lambda w: ["runs-prune", "--older-than", "1d"]),
        Step("okstra-config", "okstra-config unset", lambda w: ["okstra-config", "unset", "default-workers"]),
        Step(
            "hooks-install", "hooks-install --uninstall", lambda w: ["hooks-install", "--project", str(w.project), "--uninstall"]
        ),
    ]


def _approved_plan(world: World) -> None:
    import sys

    script = f"""
import shutil, sys
from pathlib import Path
sys.path[:0] = [{str(REPO / "lib")!r}, {str(REPO / "tests")!r}]
from fixtures.runs import make_run
layout, _ = make_run(Path("."), task_type="implementation-planning", run_number=2, activate=False)
shutil.copy({str(REPO / "tests/fixtures/reports/implementation-planning.data.json")!r}, layout.report_data("implementation-planning", 1))
layout.report_markdown("implementation-planning", 1).write_text("# plan\\n", encoding="utf-8")
"""
    world.run([sys.executable, "-c", script])
    world.memo["plan"] = ".okstra/runs/feature--rate-limit--r002/reports/final-report-implementation-planning-001.md"
    world.run(
        ["user-response-write", "--report", world.memo["plan"], "--answers", "{}", "--plan-decision",
         '{"status": "approved", "option": "A", "reason": "looks right"}'],
    )  # fmt: skip


def _stage_ready(world: World) -> None:
    _wait(world)
    world.memo["head"] = world.run(["git", "rev-parse", "HEAD"]).strip()


def stage_steps() -> list[Step]:
    return [
        Step(
            "render-bundle",
            "render-bundle stage (isolated)",
            lambda w: [
                "render-bundle",
                "--task-key",
                "feature/rate-limit",
                "--task-type",
                "implementation",
                "--workers",
                "codex",
                "--executor",
                "codex",
                "--stage",
                "1",
                "--plan",
                w.memo["plan"],
                "--isolate",
                "worktree",
                "--backend",
                "cli-wrapper",
                "--json",
            ],
        ),  # fmt: skip
        Step(
            "team-dispatch",
            "team-dispatch stage",
            lambda w: ["team-dispatch", "--run-manifest", w.manifest()],
            env={"OKSTRA_FAKE_EDITS": "write:api/limiter/shared.py"},
            after=_stage_ready,
        ),
        Step("stage-merge", "stage-merge", lambda w: ["stage-merge", "--worker", "codex", "--run-manifest", w.manifest()]),
        Step(
            "stage-record",
            "stage-record",
            lambda w: [
                "stage-record",
                "--task-key",
                "feature/rate-limit",
                "--stage",
                "1",
                "--status",
                "done",
                "--head-commit",
                w.memo["head"],
            ],
        ),  # fmt: skip
        Step("run-end", "run-end", lambda w: ["run-end", "--run-manifest", w.manifest()]),
    ]


def worker_steps() -> list[Step]:
    """worker-run alone (as team-dispatch starts it), on a run render-bundle prepared."""
    return [
        Step(
            "render-bundle",
            "render-bundle (worker run)",
            lambda w: [
                "render-bundle",
                "--task-key",
                "demo/worker",
                "--task-type",
                "analysis",
                "--workers",
                "claude",
                "--backend",
                "cli-wrapper",
                "--brief",
                "Review the project.",
                "--json",
            ],
        ),  # fmt: skip
        Step("worker-run", "worker-run", lambda w: ["worker-run", "--run-manifest", w.manifest(), "--worker", "claude"]),
        Step(
            "team-teardown",
            "team-teardown (worker run)",
            lambda w: ["team-teardown", "--run-manifest", w.manifest(), "--grace", "2"],
        ),
    ]


def _tmux(world: World) -> None:
    """A private tmux server whose first pane is the lead (tmux-pane runs, team-watch)."""
    from fixtures.tmux import TmuxServer

    server = TmuxServer.start()
    world.servers.append(server)
    world.env.update(OKSTRA_TMUX_SOCKET=server.socket, TMUX_PANE=server.lead)


def watch_steps() -> list[Step]:
    """team-watch opens a watcher pane and records it; --stop closes and forgets it."""
    return [
        Step(
            "render-bundle",
            "render-bundle (tmux run)",
            lambda w: [
                "render-bundle",
                "--task-key",
                "demo/watch",
                "--task-type",
                "analysis",
                "--workers",
                "claude",
                "--backend",
                "tmux-pane",
                "--brief",
                "Review the project.",
                "--json",
            ],
        ),  # fmt: skip
        Step(
            "team-dispatch", "team-dispatch (tmux run)", lambda w: ["team-dispatch", "--run-manifest", w.manifest()], after=_wait
        ),
        Step("team-watch", "team-watch", lambda w: ["team-watch", "--run-manifest", w.manifest()]),
        Step("team-watch", "team-watch --stop", lambda w: ["team-watch", "--stop", "--run-manifest", w.manifest()]),
    ]


PIPELINES: dict[str, tuple[Callable[[World], None] | None, Callable[[], list[Step]]]] = {
    "analysis": (None, analysis_steps),
    "stage": (_approved_plan, stage_steps),
    "worker": (None, worker_steps),
    "watch": (_tmux, watch_steps),
}


def writers() -> set[str]:
    """Every door some step exercises."""
    return {step.door for _, steps in PIPELINES.values() for step in steps()}


# ---------------------------------------------------------------- looking at a world

_NOISE = re.compile(rb"[0-9a-f]{8,}|\d+")


def _files(root: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file():
                continue
            try:
                out[str(path.relative_to(root))] = path.read_bytes()
            except OSError:
                continue
    return out


def temporary(rel: str) -> bool:
    """A writer's temporary file or folder (`.<name>.<random>.tmp`): never read as a document."""
    return any(part.startswith(".") and part.endswith(".tmp") for part in rel.split("/"))


def _skipped(rel: str) -> bool:
    """Streams and scratch: logs are appended by providers as they go, locks are empty."""
    return rel.endswith((".log", ".lock")) or "/logs/" in rel or temporary(rel)


def _whole(rel: str, data: bytes, reference: bytes | None) -> str | None:
    """None when `data` is a whole document, else why not."""
    from okstra.core import schemas

    name = rel.rsplit("/", 1)[-1]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8"
    if name.endswith(".json"):
        try:
            doc = json.loads(text)
        except ValueError as exc:
            return f"not a JSON document ({exc})"
        schema = SCHEMAS.get(name) or ("final-report-v2.0" if name.endswith(".data.json") else None)
        if schema and reference is not None and not schemas.problems(schema, json.loads(reference)):
            problems = schemas.problems(schema, doc)
            if problems:
                return f"invalid against {schema}: {problems[0]}"
        return None
    if name.endswith(".jsonl"):
        for line in text.splitlines():
            try:
                json.loads(line)
            except ValueError:
                return f"a torn JSONL line {line[:60]!r}"
        return None
    if name.endswith((".yaml", ".yml")):
        import yaml

        try:
            yaml.safe_load(text)
        except yaml.YAMLError as exc:
            return f"not YAML ({str(exc)[:60]})"
        return None
    return None


def check_world(before: dict[str, bytes], after_ref: dict[str, bytes], now: dict[str, bytes]) -> tuple[list[str], list[str]]:
    """(torn, lost) for the world `now`, between its state before the step and after an uncut one."""
    torn, lost = [], []
    for rel, data in now.items():
        if _skipped(rel):
            continue
        old, new = before.get(rel), after_ref.get(rel)
        if data in (old, new):
            continue
        why = _whole(rel, data, new if new is not None else old)
        if why is None and not rel.endswith((".json", ".jsonl", ".yaml", ".yml")):
            # Another format: the old bytes or the uncut run's, up to times and ids.
            shapes = {_NOISE.sub(b"0", v) for v in (old, new) if v is not None}
            if _NOISE.sub(b"0", data) not in shapes and rel.startswith(".okstra/"):
                why = f"neither the old version nor the new one ({len(data)} bytes)"
        if why is not None:
            torn.append(f"{rel}: {why}")
    for rel in before:
        if rel in after_ref and rel not in now and not _skipped(rel):
            lost.append(rel)
    # A run the uncut command removed (runs-prune) is there whole or gone, never half of it.
    removed = {_run_of(rel) for rel in before if _run_of(rel) and not any(_run_of(r) == _run_of(rel) for r in after_ref)}
    for run in sorted(removed):
        had = [rel for rel in before if _run_of(rel) == run and not _skipped(rel)]
        left = [rel for rel in had if rel in now]
        if left and len(left) != len(had):
            torn.append(f"{run}: half removed ({len(left)} of {len(had)} files left)")
    return torn, lost


def _run_of(rel: str) -> str | None:
    parts = rel.split("/")
    return "/".join(parts[:3]) if len(parts) > 3 and parts[:2] == [".okstra", "runs"] else None


# ---------------------------------------------------------------- processes


def trial_processes(mark: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes()
        except OSError:
            continue
        if f"{MARK}={mark}".encode() in environ.split(b"\0"):
            found.append(int(name))
    return found


def settle(mark: str, timeout: float) -> list[int]:
    """Wait for the trial's processes to end by themselves; those left after `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = trial_processes(mark)
        if not left:
            return []
        time.sleep(0.1)
    return trial_processes(mark)


# ---------------------------------------------------------------- the matrix


def _usable(world: World, step: Step, tally, label: str, mark: str) -> None:
    """The door again, then team-status: answered, never 70, a signal or a traceback."""
    env = {**world.env, **step.env, MARK: mark}
    probes = [step.argv(world)]
    if "manifest" in world.memo and (world.project / world.manifest()).exists():
        probes.append(["team-status", "--run-manifest", world.manifest(), "--json"])
    for argv in probes:
        done = subprocess.run(argv, cwd=world.project, env=env, capture_output=True, timeout=120, check=False)
        err = done.stderr.decode("utf-8", "replace").strip()
        tally.cases += 1
        if done.returncode not in (0, 1, 2) or "Traceback" in err:
            tally.exit70.append(f"{label}: then {argv[0]} exit {done.returncode}: {err.splitlines()[-1:] if err else ''}")
        elif done.returncode != 0 and not any(line.startswith(f"{argv[0]}: ") for line in err.splitlines()):
            tally.exit70.append(f"{label}: then {argv[0]} exit {done.returncode} without a reason: {err[-200:]!r}")
        else:
            tally.held += 1
        if step.after is not None and argv is probes[0]:
            step.after(world)


def _cleanup(world: World, tally, label: str, mark: str) -> None:
    """End the run as a user would (teardown), then nothing of the trial may be left."""
    if not trial_processes(mark):
        return  # nothing started, nothing to stop: the world is put back for the next trial
    if "manifest" in world.memo and (world.project / world.manifest()).exists():
        # Watchers outlive teardown by design (team-watch --stop is their one stop).
        stops = [["team-watch", "--stop"]] if "OKSTRA_TMUX_SOCKET" in world.env else []
        for argv in [*stops, ["team-teardown", "--grace", "1"]]:
            subprocess.run(
                [*argv, "--run-manifest", world.manifest()],
                cwd=world.project,
                env={**world.env, MARK: mark},
                capture_output=True,
                timeout=120,
                check=False,
            )
    for pid in settle(mark, 10.0):
        tally.orphans.append(f"{label}: pid {pid} outlived team-teardown")
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _put_back(world: World, saved: Path) -> None:
    if world.dir.exists():
        shutil.rmtree(world.dir)
    shutil.copytree(saved, world.dir, symlinks=True)


def run_matrix(
    base: Path, env: dict[str, str], tally, *, kills: int, fsizes: tuple[int, ...], pipelines=tuple(PIPELINES), seed: int = 15
) -> None:
    """`kills` SIGKILLs per step and one trial per file-size cap in `fsizes`, on each pipeline."""
    rng = random.Random(seed)
    for name in pipelines:
        prepare, make_steps = PIPELINES[name]
        world = World(base, f"sigkill-{name}", env)
        _git_project(world)
        if prepare is not None:
            prepare(world)
        saved_memo: list[dict[str, str]] = []
        states: list[Path] = []
        for i, step in enumerate(make_steps()):
            # The world before this step, kept; then the step uncut (timed) makes the next.
            states.append(base / f"saved-{name}-{i}")
            saved_memo.append(dict(world.memo))
            shutil.copytree(world.dir, states[-1], symlinks=True)
            before = _files(world.project)
            t0 = time.perf_counter()
            out = world.run(step.argv(world), extra=step.env)
            step.duration = time.perf_counter() - t0
            if step.door == "render-bundle":
                _remember_bundle(world, out)
            if step.after is not None:
                step.after(world)
            after_ref = _files(world.project)
            _trials(world, step, states[-1], saved_memo[-1], before, after_ref, tally, rng, kills, fsizes)
            # Trials changed the world: the uncut state again for the next step.
            _put_back(world, states[-1])
            world.memo = dict(saved_memo[-1])
            out = world.run(step.argv(world), extra=step.env)
            if step.door == "render-bundle":
                _remember_bundle(world, out)
            if step.after is not None:
                step.after(world)
        _cleanup(world, tally, f"{name} end", "none")
        for server in world.servers:
            server.kill()
        for state in states:
            shutil.rmtree(state, ignore_errors=True)
        shutil.rmtree(world.dir, ignore_errors=True)


def _trials(world, step, saved, memo, before, after_ref, tally, rng, kills, fsizes) -> None:
    plans: list[tuple[str, float | None, int | None]] = []
    for _ in range(kills):
        # Most of a door's run is the interpreter starting; its writes are in the last part.
        plans.append(("kill", rng.uniform(0.25, 1.1) * step.duration, None))
    for fsize in fsizes:
        plans.append(("disk-full", None, fsize))
    for n, (kind, delay, fsize) in enumerate(plans):
        _put_back(world, saved)
        world.memo = dict(memo)
        mark = f"{step.label}-{n}".replace(" ", "_")
        label = f"{kind} {step.label} #{n}" + (f" at {delay * 1000:.0f} ms" if delay is not None else f" ({fsize} B)")
        env = {**world.env, **step.env, MARK: mark}

        def limit(fsize=fsize) -> None:
            if fsize is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

        tally.cases += 1
        proc = subprocess.Popen(
            step.argv(world),
            cwd=world.project,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=limit,
        )
        if kind == "kill":
            time.sleep(delay)
            try:
                proc.send_signal(signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.communicate(timeout=120)
            tally.kills += 1
            tally.kills_mid_run += proc.returncode == -signal.SIGKILL
        else:
            tally.disk_full_runs += 1
            _, err = proc.communicate(timeout=120)
            text = err.decode("utf-8", "replace").strip()
            if proc.returncode not in (0, 1, 2) or "Traceback" in text:
                tally.exit70.append(f"{label}: exit {proc.returncode}: {text.splitlines()[-1:] if text else ''}")
        # Children the door started finish (or are stopped by the next step) as in a real run.
        settle(mark, 20.0)
        torn, lost = check_world(before, after_ref, _files(world.project))
        tally.torn.extend(f"{label}: {t}" for t in torn)
        tally.lost.extend(f"{label}: {rel} lost" for rel in lost)
        if not torn and not lost:
            tally.held += 1
        _usable(world, step, tally, label, mark)
        tally.litter.extend(f"{label}: {rel}" for rel in _files(world.project) if temporary(rel) and rel.startswith(".okstra/"))
        _cleanup(world, tally, label, mark)
