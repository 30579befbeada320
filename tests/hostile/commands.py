"""The okstra-command half of the hostile corpus: bad environment and input (no exit 70,
nothing torn), confused deputies, and processes (parallel dispatch, setsid grandchildren)."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import time
from pathlib import Path

from fixtures.runs import FAKES, make_run
from fixtures.team import edit_team_state

REPO = Path(__file__).resolve().parents[2]
GRANDCHILD_MARK = "31415"  # sleep's argument: how a stray grandchild is found in /proc


def _cmd(
    tally, label: str, argv: list[str], *, cwd: Path, env: dict[str, str], fsize: int | None = None, stdin: bytes = b""
) -> subprocess.CompletedProcess:
    tally.cases += 1

    def limit() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    try:
        done = subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True, timeout=60, preexec_fn=limit, check=False)
    except subprocess.TimeoutExpired:
        tally.exit70.append(f"{label}: hung for 60 s")
        return subprocess.CompletedProcess(argv, -1, b"", b"")
    err = done.stderr.decode("utf-8", "replace")
    if done.returncode == 70 or "Traceback" in err or done.returncode < 0:
        tally.exit70.append(f"{label}: exit {done.returncode}: {err.strip().splitlines()[-1:] if err.strip() else ''}")
    else:
        tally.held += 1
    return done


def _torn(tally, label: str, root: Path) -> None:
    """Every JSON state file parses, and no writer's temporary is left behind."""
    for path in root.rglob("*"):
        if path.name.endswith(".tmp") and path.name.startswith("."):
            tally.torn.append(f"{label}: temporary left: {path}")
        elif path.suffix == ".json" and path.is_file() and not path.is_symlink() and "hostile-input" not in path.name:
            try:
                json.loads(path.read_text(encoding="utf-8"))
            except (ValueError, UnicodeDecodeError):
                tally.torn.append(f"{label}: {path} is not a whole document")


def bad_input(base: Path, env: dict[str, str], tally, every: int = 1) -> None:
    project = base / "bad-input"
    project.mkdir()
    layout, manifest = make_run(project, ["claude"])
    penv = {**env, "OKSTRA_PROJECT_ROOT": str(project)}
    deep = project / "hostile-input-deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    surrogate = project / "hostile-input-surrogate.json"
    surrogate.write_text('{"Q1": "\\ud800"}')
    weird = project / os.fsdecode(b"hostile-input-\xff.json")
    weird.write_text("{}")
    fifo = project / "hostile-input-fifo.json"
    os.mkfifo(fifo)
    laughs = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=False)
    )
    cases = [
        ("render-final-report deep", ["render-final-report", str(deep)]),
        ("render-final-report fifo", ["render-final-report", str(fifo)]),
        ("render-final-report \\xff", ["render-final-report", str(weird)]),
        ("render-final-report folder", ["render-final-report", str(project / ".okstra")]),
        ("user-response-write deep", ["user-response-write", "--report", "R.md", "--answers", "[" * 30_000 + "]" * 30_000]),
        ("user-response-write surrogate", ["user-response-write", "--report", "R.md", "--answers", '{"Q1": "\\ud800"}']),
        ("user-response-write huge", ["user-response-write", "--report", "R.md", "--answers", '{"Q1": "' + "a" * 120_000 + '"}']),
        ("team-status \\xff manifest", ["team-status", "--run-manifest", str(weird)]),
        ("prompt-check fifo", ["prompt-check", str(fifo), "--run-manifest", str(layout.manifest), "--worker", "claude-analyst"]),
        ("render-report-views deep", ["render-report-views", str(deep)]),
    ]
    for label, argv in cases[::every]:
        _cmd(tally, label, argv, cwd=project, env=penv)
    (project / ".okstra" / "config.yaml").write_text(laughs)
    _cmd(tally, "config list (billion laughs)", ["okstra-config", "list"], cwd=project, env=penv)
    (project / ".okstra" / "config.yaml").unlink()
    # State files of the wrong type.
    for label, spoil in (
        ("team-state is a folder", lambda: (layout.team_state.unlink(), layout.team_state.mkdir())),
        ("team-state is a FIFO", lambda: (layout.team_state.rmdir(), os.mkfifo(layout.team_state))),
        ("team-state is a symlink out", lambda: (layout.team_state.unlink(), layout.team_state.symlink_to("/etc/hostname"))),
    ):
        spoil()
        _cmd(tally, f"team-status: {label}", ["team-status", "--run-manifest", str(layout.manifest)], cwd=project, env=penv)
        _cmd(tally, f"team-dispatch: {label}", ["team-dispatch", "--run-manifest", str(layout.manifest)], cwd=project, env=penv)
    layout.team_state.unlink()
    # user-responses a symlink out of the project: nothing is written outside.
    outside = base / "outside"
    outside.mkdir()
    layout.responses_dir.rmdir() if layout.responses_dir.exists() else None
    layout.responses_dir.parent.mkdir(parents=True, exist_ok=True)
    layout.responses_dir.symlink_to(outside)
    _cmd(
        tally,
        "user-response-write into a symlinked folder",
        ["user-response-write", "--report", str(layout.report_markdown("analysis", 1)), "--answers", "{}"],
        cwd=project,
        env=penv,
    )
    if any(outside.iterdir()):
        tally.bypasses.append("user-response-write wrote through a symlinked user-responses folder")


def disk_full(base: Path, env: dict[str, str], tally, every: int = 1) -> None:
    """Every writing command with file writes capped at 1 KiB (RLIMIT_FSIZE: a write past it
    fails with EFBIG, as a full disk fails with ENOSPC): exit 2 or 1, never 70, nothing torn."""
    project = base / "disk-full"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    layout, manifest = make_run(project, ["claude", "codex"])
    # No bytecode cache: a capped write must not truncate a .pyc for later runs.
    penv = {**env, "OKSTRA_PROJECT_ROOT": str(project), "PATH": f"{FAKES}:{env['PATH']}", "PYTHONDONTWRITEBYTECODE": "1"}
    big = "x" * 4096
    cases = [
        (
            "render-bundle",
            ["render-bundle", "--task-key", "feature/other", "--task-type", "analysis", "--workers", "claude"]
            + ["--brief", "Review the limiter.", "--json"],
        ),
        ("okstra-config set", ["okstra-config", "set", "pr-template-path", big[:900] + "/t.md"]),
        ("team-dispatch", ["team-dispatch", "--run-manifest", str(layout.manifest)]),
        ("round-prepare", ["round-prepare", "--role", "verifier", "--run-manifest", str(layout.manifest)]),
        ("team-reclaim", ["team-reclaim", "--run-manifest", str(layout.manifest)]),
        ("team-teardown", ["team-teardown", "--run-manifest", str(layout.manifest)]),
    ]
    for label, argv in cases[::every]:
        _cmd(tally, f"disk full: {label}", argv, cwd=project, env=penv, fsize=1024)
        _torn(tally, f"disk full: {label}", project / ".okstra")
    # worker-run with a result too big for the disk: its dispatch ends error, never in-progress.
    project2 = base / "disk-full-worker"
    project2.mkdir()
    layout2, _ = make_run(project2, ["claude"])
    _cmd(
        tally,
        "disk full: worker-run",
        ["worker-run", "--run-manifest", str(layout2.manifest), "--worker", "claude-analyst"],
        cwd=project2,
        env={**penv, "OKSTRA_PROJECT_ROOT": str(project2)},
        fsize=2048,
    )
    state = json.loads(layout2.team_state.read_text())
    statuses = [d["status"] for d in state["workerDispatches"]]
    if "in-progress" in statuses:
        tally.torn.append(f"disk full: worker-run left its dispatch in-progress ({statuses})")
    _torn(tally, "disk full: worker-run", project2 / ".okstra")


def deputies(base: Path, env: dict[str, str], tally) -> None:
    """okstra's commands must not write what the guard protects, whatever they are told."""
    project = base / "deputy"
    project.mkdir()
    layout, _ = make_run(project, ["claude"])
    penv = {**env, "OKSTRA_PROJECT_ROOT": str(project), "PATH": f"{FAKES}:{env['PATH']}"}
    sidecar = layout.sidecar("analysis", 1)
    sidecar.parent.mkdir(parents=True, exist_ok=True)
    sidecar.write_text("# the user's answers\n")
    # worker-run told that its result is the sidecar: first by a hand edit (refused by the
    # team state's seal, DESIGN §14: exit 2, nothing changed), then by a sealed state (the
    # scenario set up through okstra's seal, refused by the path rule behind it).
    argv = ["worker-run", "--run-manifest", str(layout.manifest), "--worker", "claude-analyst"]
    clean = layout.team_state.read_text()
    for edit, value in (("resultPath", layout.relative(sidecar)), ("status", "completed")):
        state = json.loads(clean)
        state["workerDispatches"][0][edit] = value
        layout.team_state.write_text(json.dumps(state))
        handed = layout.team_state.read_text()
        done = _cmd(tally, f"worker-run hand-edited {edit}", argv, cwd=project, env=penv)
        err = done.stderr.decode("utf-8", "replace")
        if done.returncode != 2 or "changed outside okstra" not in err or layout.team_state.read_text() != handed:
            tally.bypasses.append(f"worker-run read a team state with a hand-edited {edit} (exit {done.returncode})")
    layout.team_state.write_text(clean)
    edit_team_state(layout.team_state, lambda doc: doc["workerDispatches"][0].update(resultPath=layout.relative(sidecar)))
    _cmd(tally, "worker-run resultPath=sidecar (sealed)", argv, cwd=project, env=penv)
    if sidecar.read_text() != "# the user's answers\n":
        tally.bypasses.append("worker-run wrote its result over a sidecar named in the team state")
    render_deputies(base, env, tally)


def render_deputies(base: Path, env: dict[str, str], tally) -> None:
    """render-final-report / render-report-views told to write their output onto a sidecar, a
    state file or a source file (DESIGN §14): refused, the target unchanged."""
    from fixtures.reports import reportfix

    project = base / "deputy-render"
    project.mkdir()
    reports = project / ".okstra" / "runs" / "feature--rate-limit--r001" / "reports"
    name = str((reports / "final-report-analysis-001.data.json").relative_to(project))
    data = reportfix.place(project, name, source=reportfix.HERE / "analysis.data.json")
    targets = {
        "sidecar": reports / "user-responses" / "user-response-analysis-001.md",
        "team state": reports.parent / "team-state.json",
        "active run": project / ".okstra" / "active-run.json",
        "source file": project / "src" / "app.py",
        "plan data": data,
    }
    for target in targets.values():
        if target != data:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("# protected\n")
    penv = {**env, "OKSTRA_PROJECT_ROOT": str(project)}
    for command in ("render-final-report", "render-report-views"):
        for name, target in targets.items():
            before = target.read_bytes()
            _cmd(tally, f"{command} --output {name}", [command, str(data), "--output", str(target)], cwd=project, env=penv)
            if target.read_bytes() != before:
                tally.bypasses.append(f"{command} --output wrote over the {name}")
                target.write_bytes(before)


def _plan_project(base: Path, name: str, env: dict[str, str], decision: str) -> tuple[Path, Path, str, dict[str, str]]:
    """A project with an implementation plan (the fixture) the user decided on in their own
    terminal: (project, the plan's data file, the plan's .md, the environment)."""
    import shutil

    from fixtures.reports import reportfix

    project = base / name
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    layout, _ = make_run(project, task_type="implementation-planning", run_number=2, activate=False)
    data = layout.report_data("implementation-planning", 1)
    shutil.copy(reportfix.HERE / "implementation-planning.data.json", data)
    plan = layout.relative(layout.report_markdown("implementation-planning", 1))
    layout.report_markdown("implementation-planning", 1).write_text("# plan\n")
    penv = {**env, "OKSTRA_PROJECT_ROOT": str(project), "PATH": f"{FAKES}:{env['PATH']}"}
    record = ["user-response-write", "--report", plan, "--answers", "{}", "--plan-decision", decision]
    subprocess.run(record, cwd=project, env=penv, capture_output=True, check=True)
    return project, data, plan, penv


_STAGE = ["render-bundle", "--task-key", "feature/rate-limit", "--task-type", "implementation", "--workers", "codex"]


def plan_tamper(base: Path, env: dict[str, str], tally) -> None:
    """The lead widens an approved plan's data (stage 1 may write `**`) and renders the stage:
    render-bundle refuses a plan changed after the user approved it (DESIGN §9)."""
    project, data, plan, penv = _plan_project(base, "plan-tamper", env, '{"status":"approved","option":"A"}')
    doc = json.loads(data.read_text())
    doc["implementationPlanning"]["stageMap"][0]["plannedPaths"] = ["**"]
    data.write_text(json.dumps(doc))
    done = _cmd(
        tally, "render-bundle --stage of a widened plan", [*_STAGE, "--stage", "1", "--plan", plan], cwd=project, env=penv
    )
    if done.returncode == 0:
        tally.bypasses.append("render-bundle rendered a stage from a plan changed after the user approved it")


def sidecar_forgery(base: Path, env: dict[str, str], tally) -> None:
    """Between runs (no guard), the lead edits the sidecar: the user's rejection becomes an
    approval (the recorded plan-sha256 still matches the plan), or a whole PLAN DECISION is
    appended with the plan's sha256 computed by hand. okstra's readers refuse a sidecar its
    writer did not write (DESIGN §14): render-bundle --stage renders nothing."""
    import hashlib

    rejected = '{"status":"rejected","reason":"too wide"}'
    project, data, plan, penv = _plan_project(base, "sidecar-forgery", env, rejected)
    sidecar = next((data.parent / "user-responses").glob("*.md"))
    sidecar.write_text(sidecar.read_text().replace('"rejected"', '"approved"').replace("- option: null", '- option: "A"'))
    done = _cmd(
        tally, "render-bundle --stage, rejection edited", [*_STAGE, "--stage", "1", "--plan", plan], cwd=project, env=penv
    )
    if done.returncode == 0:
        tally.bypasses.append("render-bundle rendered a stage from a sidecar whose rejection was edited to an approval")
    project, data, plan, penv = _plan_project(base, "sidecar-append", env, rejected)
    sidecar = next((data.parent / "user-responses").glob("*.md"))
    text = sidecar.read_text().split("## PLAN DECISION")[0]
    digest = hashlib.sha256(data.read_bytes()).hexdigest()
    forged = f'## PLAN DECISION\n\n- status: "approved"\n- option: "A"\n- reason: null\n- plan-sha256: "{digest}"\n'
    sidecar.write_text(text + forged)
    done = _cmd(tally, "render-bundle --stage, decision forged", [*_STAGE, "--stage", "1", "--plan", plan], cwd=project, env=penv)
    if done.returncode == 0:
        tally.bypasses.append("render-bundle rendered a stage from a PLAN DECISION the lead wrote into the sidecar")


def _strays() -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            except OSError:
                continue
            if cmdline.startswith(b"sleep\x00") and GRANDCHILD_MARK.encode() in cmdline:
                found.append(int(name))
    return found


def processes(base: Path, env: dict[str, str], tally, *, parallel: int) -> None:
    # 1. A provider whose setsid grandchild ignores TERM/HUP: gone when worker-run ends.
    shim = base / "shim"
    shim.mkdir()
    script = shim / "claude"
    script.write_text(
        "#!/bin/sh\n"
        f"setsid sh -c 'trap \"\" TERM HUP; exec sleep {GRANDCHILD_MARK}' </dev/null >/dev/null 2>&1 &\n"
        f'exec "{FAKES}/claude" "$@"\n'
    )
    script.chmod(0o755)
    project = base / "procs"
    penv = {**env, "OKSTRA_PROJECT_ROOT": str(project), "PATH": f"{shim}:{FAKES}:{env['PATH']}"}
    manifest = _bundle(project, "claude", penv)
    done = _cmd(
        tally,
        "worker-run with a setsid grandchild",
        ["worker-run", "--run-manifest", str(manifest), "--worker", "claude"],
        cwd=project,
        env=penv,
    )
    if done.returncode != 0:
        tally.exit70.append(f"worker-run with a setsid grandchild did not complete: {done.stderr.decode()[-200:]}")
    time.sleep(0.3)
    for pid in _strays():
        tally.orphans.append(f"setsid grandchild {pid} outlived worker-run")
        os.kill(pid, signal.SIGKILL)
    # 2. Ten team-dispatch calls at once: each worker launched exactly once, none left running.
    project = base / "parallel"
    penv = {**env, "OKSTRA_PROJECT_ROOT": str(project), "PATH": f"{FAKES}:{env['PATH']}", "OKSTRA_FAKE_MODE": "slow"}
    manifest = _bundle(project, "claude,codex,grok,kimi", penv)
    team_state_path = manifest.parent / "team-state.json"
    calls = [
        subprocess.Popen(
            ["team-dispatch", "--run-manifest", str(manifest)],
            cwd=project,
            env=penv,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for _ in range(parallel)
    ]
    for call in calls:
        tally.cases += 1
        _, err = call.communicate(timeout=60)
        if call.returncode == 70 or b"Traceback" in err:
            tally.exit70.append(f"parallel team-dispatch: exit {call.returncode}")
        else:
            tally.held += 1
    subprocess.run(
        ["worker-wait", "--run-manifest", str(manifest), "--timeout", "60"],
        cwd=project,
        env=penv,
        capture_output=True,
        timeout=90,
        check=False,
    )
    for d in json.loads(team_state_path.read_text())["workerDispatches"]:
        log = project / d["logPath"]
        starts = log.read_text().count("worker-run pid") if log.exists() else 0
        if starts != 1:
            tally.orphans.append(f"parallel dispatch: {d['workerId']} launched {starts} times")
    subprocess.run(
        ["team-teardown", "--run-manifest", str(manifest)], cwd=project, env=penv, capture_output=True, timeout=60, check=False
    )


def _bundle(project: Path, workers: str, env: dict[str, str]) -> Path:
    """A real run prepared by render-bundle (prompts that pass the contract)."""
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    done = subprocess.run(
        ["render-bundle", "--task-key", "feature/hostile", "--task-type", "analysis", "--workers", workers]
        + ["--brief", "Review the project.", "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        timeout=60,
        check=True,
    )
    return project / json.loads(done.stdout)["runManifestPath"]


def run_all(base: Path, env: dict[str, str], tally, *, parallel: int, every: int = 1) -> None:
    bad_input(base, env, tally, every)
    deputies(base, env, tally)
    plan_tamper(base, env, tally)
    sidecar_forgery(base, env, tally)
    disk_full(base, env, tally, every)
    processes(base, env, tally, parallel=parallel)
