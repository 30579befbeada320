"""Hook rows (DESIGN §13): the installed write-guard's median wall per call, against the
installed interpreter's bare start-up, with an active stage of 200 planned paths and
with no active run."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import time
from pathlib import Path

from bench.run import Context, Row
from okstra.core import fsio
from okstra.model.active_run import ActiveRun, ApprovedStage

CALLS = 60
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hooks"
FIXTURE = FIXTURES / "pretooluse-edit.json"
# A lead's everyday Bash call during a stage: read-only tools, okstra's own command, the
# project's test command, and a redirection onto a planned path (every part read and judged).
BASH = (
    "cd {project} && git status --short && grep -rn TODO src/service | head -n 20 && "
    "team-status --json > /dev/null && make test 2>&1 | tail -n 40 > tests/area_39/unit/deep/test_out.py"
)


def _planned() -> tuple[str, ...]:
    literals = [f"src/service/module_{i:03d}.py" for i in range(160)]
    globs = [f"tests/area_{i:02d}/**/test_*.py" for i in range(40)]
    return tuple(literals + globs)


def _stdin(project: Path, target: Path) -> bytes:
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    doc["cwd"] = str(project)
    doc["tool_input"]["file_path"] = str(target)
    return json.dumps(doc).encode("utf-8")


def _bash_stdin(project: Path, command: str) -> bytes:
    text = (FIXTURES / "pretooluse-bash.json").read_text(encoding="utf-8")
    doc = json.loads(text.replace("@CWD@", str(project)).replace("@COMMAND@", "x"))
    doc["tool_input"]["command"] = command
    return json.dumps(doc).encode("utf-8")


def _call(hook: Path, stdin: bytes, env: dict[str, str]) -> str:
    done = subprocess.run([str(hook)], input=stdin, env=env, capture_output=True, timeout=60, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"write-guard exited {done.returncode}: {done.stderr.decode(errors='replace')}")
    return done.stdout.decode()


def _interleaved(commands: dict[str, tuple[list[str], bytes, dict[str, str] | None]], calls: int) -> dict[str, float]:
    """Median wall of each command, taking turns, so a busy machine weighs on all alike."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(calls):
        for name, (argv, stdin, env) in commands.items():
            t0 = time.perf_counter()
            subprocess.run(argv, input=stdin, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(values) for name, values in times.items()}


def rows(ctx: Context) -> list[Row]:
    ctx.startup()  # the shared baseline row (bench_core) measures it once, apart
    hook = ctx.prefix / "hooks" / "write-guard"
    active = ctx.tmp / "hook-project-active"
    idle = ctx.tmp / "hook-project-idle"
    idle.mkdir()
    run_id = "feature--rate-limit--r001"
    stage = ApprovedStage(3, "Service split", _planned(), "0123abcd")
    run = ActiveRun(
        run_id=run_id,
        task_key="feature/rate-limit",
        task_type="implementation",
        run_dir=f".okstra/runs/{run_id}",
        run_manifest_path=f".okstra/runs/{run_id}/run-manifest.json",
        phase="implementation",
        stage=stage,
        allowed_commands=("make test",),
    )
    fsio.write_json(active / ".okstra" / "active-run.json", run.to_dict())
    # The path matched by the last glob: every literal and glob is looked at.
    target = active / "tests" / "area_39" / "unit" / "deep" / "test_limits.py"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OKSTRA_", "CLAUDE_"))}
    active_env = {**env, "CLAUDE_PROJECT_DIR": str(active)}
    idle_env = {**env, "CLAUDE_PROJECT_DIR": str(idle)}
    allowed, denied = _stdin(active, target), _stdin(active, active / "setup.py")
    # Warm up (the first call writes the bytecode cache) and prove the calls decide.
    assert _call(hook, allowed, active_env) == "", "the planned path must be allowed"
    assert '"permissionDecision":"deny"' in _call(hook, denied, active_env), "an unplanned path must be denied"
    assert _call(hook, allowed, idle_env) == ""
    bash = _bash_stdin(active, BASH.format(project=active))
    bash_denied = _bash_stdin(active, BASH.format(project=active) + " && echo x > setup.py")
    assert _call(hook, bash, active_env) == "", "the everyday Bash call must be allowed"
    assert '"permissionDecision":"deny"' in _call(hook, bash_denied, active_env), "a write outside the plan must be denied"
    medians = _interleaved(
        {
            "startup": ([str(ctx.python), "-c", "pass"], b"", None),
            "active": ([str(hook)], allowed, active_env),
            "idle": ([str(hook)], allowed, idle_env),
            "bash": ([str(hook)], bash, active_env),
            "bash-denied": ([str(hook)], bash_denied, active_env),
        },
        CALLS,
    )
    startup = medians["startup"]
    return [
        Row(
            "write-guard, active stage of 200 planned paths (median/call)",
            medians["active"],
            "s",
            "start-up",
            startup,
            "<= 1.3",
            f"{CALLS} calls of the installed hooks/write-guard with a real-shaped Edit input, "
            f"interleaved with {CALLS} bare start-ups (python -c pass) as the baseline",
        ),
        Row(
            "write-guard, Bash allow-list, allowed (median/call)",
            medians["bash"],
            "s",
            "start-up",
            startup,
            "<= 1.3",
            "a 5-part Bash call (cd, git status, grep | head, team-status, make test | tail > planned path): "
            "tokenised, each command's rule, the redirection judged against the 200 planned paths",
        ),
        Row(
            "write-guard, Bash allow-list, denied (median/call)",
            medians["bash-denied"],
            "s",
            "start-up",
            startup,
            "<= 1.3",
            "the same call ending in a write outside the plan: the deny reason built and printed",
        ),
        Row(
            "write-guard, no active run (median/call)",
            medians["idle"],
            "s",
            "start-up",
            startup,
            "<= 0.25",
            "decided by the sh door before any interpreter starts",
        ),
    ]
