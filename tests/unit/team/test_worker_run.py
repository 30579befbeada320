"""worker-run with real processes: fake provider CLIs, signals, refusals, hostile values."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import BIN, tree_snapshot
from fixtures.runs import add_attempt, fakes_env, make_run, set_dispatch
from okstra.model import team_state
from okstra.team import processes


def worker_run(layout, worker, *args, env=None, timeout=60):
    return subprocess.run(
        [sys.executable, str(BIN / "worker-run"), "--run-manifest", str(layout.manifest), "--worker", worker, *args],
        capture_output=True,
        text=True,
        env=env or fakes_env(),
        timeout=timeout,
    )


def start_worker_run(layout, worker, env):
    return subprocess.Popen(
        [sys.executable, str(BIN / "worker-run"), "--run-manifest", str(layout.manifest), "--worker", worker],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )


def record(layout, worker, attempt=None):
    return team_state.load(layout.team_state).find(worker, attempt)


def wait_for(predicate, timeout=15.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("condition not reached in time")


def child_pid_of(layout, worker):
    def read():
        try:
            beat = json.loads(layout.heartbeat_path(worker).read_text())
        except (OSError, ValueError):
            return None
        return beat.get("childPid")

    return wait_for(read)


def group_members(pgid):
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = processes.stat_fields(int(entry.name))
            if fields and len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
                members.append(int(entry.name))
    return members


@pytest.mark.parametrize("provider", ["claude", "codex", "antigravity", "grok", "kimi"])
def test_a_fake_worker_completes_with_result_usage_and_record(project, provider):
    layout, _ = make_run(project, [provider])
    worker = f"{provider}-analyst"
    done = worker_run(layout, worker)
    assert done.returncode == 0, done.stderr
    d = record(layout, worker)
    assert d.status == "completed" and d.exit_code == 0 and d.reason is None
    assert d.started_at and d.finished_at and d.pid and d.pgid and d.pid_start_time
    assert d.liveness_mode == "heartbeat" and d.liveness_artifact == layout.relative(layout.heartbeat_path(worker))
    result = (project / d.result_path).read_text()
    assert "# Findings (analysis)" in result and result.endswith("\n")
    if provider in ("grok", "kimi"):
        assert d.usage is None
    else:
        assert d.usage.input_tokens > 0 and d.usage.output_tokens > 0
    assert (d.usage.cost_usd is not None) == (provider == "claude") if d.usage else True
    log = layout.log_path(worker).read_text()
    assert "worker-run pid" in log and "child exited 0" in log
    assert "Findings" in done.stdout  # the child's output is teed to worker-run's stdout
    assert not list(layout.results_dir.glob(".*.tmp"))


def test_the_provider_gets_its_environment_cwd_and_the_prompt_as_one_argument(tmp_path, monkeypatch):
    root = tmp_path / "my project; $(touch pwned) 'q' \"d\""
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.chdir(root)
    layout, _ = make_run(root.resolve(), ["claude"])
    hostile = "**Task Type:** `analysis`\n; $(touch pwned2) `touch pwned3` \"quoted\" 'single' && rm -rf /nonexistent"
    layout.prompt_path("claude-analyst").write_text(hostile)
    log = tmp_path / "argv.jsonl"
    done = worker_run(layout, "claude-analyst", env=fakes_env(OKSTRA_FAKE_ARGV_LOG=str(log)))
    assert done.returncode == 0, done.stderr
    call = json.loads(log.read_text())
    assert call["argv"][call["argv"].index("-p") + 1] == hostile
    assert call["argv"][call["argv"].index("--model") + 1] == "claude-sonnet-4-5"
    assert Path(call["cwd"]) == root.resolve()
    env = call["env"]
    assert env["OKSTRA_RUN_ID"] == layout.run_id and env["OKSTRA_WORKER_ID"] == "claude-analyst"
    assert env["OKSTRA_WORKER_ROLE"] == "analyst" and Path(env["OKSTRA_PROJECT_ROOT"]) == root.resolve()
    assert (
        env["OKSTRA_RESULT_PATH"] == str(layout.result_path("claude-analyst")) and Path(env["OKSTRA_RESULT_PATH"]).is_absolute()
    )
    assert env["OKSTRA_EVIDENCE_DIR"] == str(layout.evidence_dir("claude-analyst"))
    assert not any(p.name.startswith("pwned") for p in [*root.rglob("*"), *tmp_path.iterdir()])


def test_a_crash_is_an_error_with_exit_code_and_last_stderr_line(project):
    layout, _ = make_run(project, ["grok"])
    done = worker_run(layout, "grok-analyst", env=fakes_env(OKSTRA_FAKE_MODE="crash"))
    assert done.returncode == 1
    d = record(layout, "grok-analyst")
    assert d.status == "error" and d.exit_code == 3
    assert d.reason == "provider exited 3: Error: fake grok crashed on purpose (OKSTRA_FAKE_MODE=crash)"
    assert not layout.result_path("grok-analyst").exists()


@pytest.mark.parametrize("provider", ["claude", "codex", "antigravity", "kimi"])
def test_a_usage_limit_reads_rate_limited(project, provider):
    layout, _ = make_run(project, [provider])
    done = worker_run(layout, f"{provider}-analyst", env=fakes_env(OKSTRA_FAKE_MODE="rate-limit"))
    assert done.returncode == 1
    d = record(layout, f"{provider}-analyst")
    # gemini exits 173 after its 429 retries, the others 1 (as observed).
    assert (d.status, d.exit_code) == ("error", 173 if provider == "antigravity" else 1)
    assert d.reason.startswith("rate-limited: ")
    assert not layout.result_path(f"{provider}-analyst").exists()


def test_a_per_provider_mode_overrides_the_global_one(project):
    layout, _ = make_run(project, ["claude", "codex"])
    env = fakes_env(OKSTRA_FAKE_MODE="crash", OKSTRA_FAKE_MODE_CODEX="ok")
    assert worker_run(layout, "codex-analyst", env=env).returncode == 0
    assert worker_run(layout, "claude-analyst", env=env).returncode == 1


def test_garbage_output_is_no_answer(project):
    layout, _ = make_run(project, ["antigravity"])
    assert worker_run(layout, "antigravity-analyst", env=fakes_env(OKSTRA_FAKE_MODE="garbage")).returncode == 1
    d = record(layout, "antigravity-analyst")
    assert (d.status, d.exit_code) == ("error", 0)
    assert d.reason == "no result file and no answer in output (55 bytes of stdout hold no gemini response)"


def test_a_fast_worker_still_records_its_exit_status(project, tmp_path):
    fast = tmp_path / "fastbin"
    fast.mkdir()
    script = fast / "grok"
    script.write_text('#!/bin/sh\nprintf \'{"text":"fast answer","stopReason":"EndTurn"}\\n\'\nexit 0\n')
    script.chmod(0o755)
    failing = tmp_path / "failbin"
    failing.mkdir()
    (failing / "kimi").write_text("#!/bin/sh\necho 'kimi: bad key' >&2\nexit 7\n")
    (failing / "kimi").chmod(0o755)
    layout, _ = make_run(project, ["grok", "kimi"])
    subprocess.run([str(script)], check=True, capture_output=True)
    env = dict(os.environ, PATH=f"{fast}{os.pathsep}{failing}{os.pathsep}{os.environ['PATH']}")
    assert worker_run(layout, "grok-analyst", env=env).returncode == 0
    assert record(layout, "grok-analyst").status == "completed"
    assert layout.result_path("grok-analyst").read_text() == "fast answer\n"
    assert worker_run(layout, "kimi-analyst", env=env).returncode == 1
    d = record(layout, "kimi-analyst")
    assert (d.status, d.exit_code, d.reason) == ("error", 7, "provider exited 7: kimi: bad key")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_kills_the_child_group_and_records_error(project, signum):
    layout, _ = make_run(project, ["codex"])
    proc = start_worker_run(layout, "codex-analyst", fakes_env(OKSTRA_FAKE_MODE="hang"))
    try:
        child = child_pid_of(layout, "codex-analyst")
        assert group_members(child), "the provider runs in its own process group"
        assert record(layout, "codex-analyst").status == "in-progress"
        proc.send_signal(signum)
        assert proc.wait(timeout=10) == 128 + signum
    finally:
        if proc.poll() is None:
            proc.kill()
    d = record(layout, "codex-analyst")
    assert d.status == "error" and d.reason == f"terminated by {signal.Signals(signum).name}"
    assert d.finished_at
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)
    assert group_members(child) == []
    assert "terminated by" in proc.stderr.read().decode()


def test_sigterm_before_the_child_answers_a_slow_provider_too(project):
    layout, _ = make_run(project, ["claude"])
    # The provider would answer only after 600 s, so worker-run can end within the 60 s that
    # bound a hang only by stopping it; how soon is not a figure asserted here.
    proc = start_worker_run(layout, "claude-analyst", fakes_env(OKSTRA_FAKE_MODE="slow", OKSTRA_FAKE_DELAY="600"))
    child = None
    try:
        child = child_pid_of(layout, "claude-analyst")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 143
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if child and group_members(child):
            processes.kill_group(child, signal.SIGKILL)
    d = record(layout, "claude-analyst")
    assert (d.status, d.reason) == ("error", "terminated by SIGTERM") and d.finished_at
    assert not layout.result_path("claude-analyst").exists()  # stopped before it answered
    assert group_members(child) == []


def test_the_heartbeat_is_rewritten_while_the_child_lives(project):
    layout, _ = make_run(project, ["kimi"])
    proc = start_worker_run(layout, "kimi-analyst", fakes_env(OKSTRA_FAKE_MODE="slow", OKSTRA_FAKE_DELAY="2.6"))
    try:
        child_pid_of(layout, "kimi-analyst")
        first = layout.heartbeat_path("kimi-analyst").stat().st_mtime_ns
        time.sleep(1.3)
        assert layout.heartbeat_path("kimi-analyst").stat().st_mtime_ns > first
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert record(layout, "kimi-analyst").status == "completed"


def test_a_terminal_dispatch_refuses_to_run_again_and_changes_nothing(project):
    layout, _ = make_run(project, ["claude"])
    set_dispatch(layout, "claude-analyst", status="completed")
    before = tree_snapshot(project / ".okstra")
    done = worker_run(layout, "claude-analyst")
    assert done.returncode == 2
    assert "already completed" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert tree_snapshot(project / ".okstra") == before


@pytest.mark.parametrize("bad", ["../outside.md", "/etc/passwd-result.md", ".okstra/../../x.md"])
def test_a_result_path_outside_the_project_is_refused(project, bad):
    layout, _ = make_run(project, ["claude"])
    set_dispatch(layout, "claude-analyst", result_path=bad)
    before = tree_snapshot(project / ".okstra")
    done = worker_run(layout, "claude-analyst")
    assert done.returncode == 2 and "outside the project" in done.stderr
    assert tree_snapshot(project / ".okstra") == before
    assert not (project.parent / "outside.md").exists()


def test_a_result_path_on_a_sidecar_is_refused_and_nothing_changes(project):
    layout, _ = make_run(project, ["claude"])
    sidecar = layout.responses_dir / "user-response-analysis-001.md"
    set_dispatch(layout, "claude-analyst", result_path=layout.relative(sidecar))
    before = layout.team_state.read_bytes()
    done = worker_run(layout, "claude-analyst")
    assert done.returncode == 2 and f"is outside {layout.results_dir}" in done.stderr
    assert layout.team_state.read_bytes() == before and not sidecar.exists()


def test_a_dispatch_without_a_recorded_result_path_is_refused(project):
    layout, _ = make_run(project, ["claude"])
    set_dispatch(layout, "claude-analyst", result_path=None)
    done = worker_run(layout, "claude-analyst")
    assert done.returncode == 2 and "no recorded resultPath" in done.stderr


@pytest.mark.parametrize(
    "args,message",
    [
        (["--worker", "Bad;id"], "is not a worker id"),
        (["--worker", "nobody"], "no dispatch for worker 'nobody'"),
        (["--worker", "claude-analyst", "--attempt", "0"], "--attempt"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(project, args, message):
    layout, _ = make_run(project, ["claude"])
    done = subprocess.run(
        [sys.executable, str(BIN / "worker-run"), "--run-manifest", str(layout.manifest), *args],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_manifest_outside_a_run_folder_is_refused(project):
    stray = project / "stray" / "run-manifest.json"
    stray.parent.mkdir()
    stray.write_text("{}")
    done = subprocess.run(
        [sys.executable, str(BIN / "worker-run"), "--run-manifest", str(stray), "--worker", "x"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2 and "is not a run manifest" in done.stderr


def test_a_missing_provider_binary_records_error_and_exits_2(project, tmp_path):
    layout, _ = make_run(project, ["grok"])
    env = dict(os.environ, PATH=str(Path(sys.executable).parent))
    done = worker_run(layout, "grok-analyst", env=env)
    assert done.returncode == 2 and "not found" in done.stderr
    d = record(layout, "grok-analyst")
    assert d.status == "error" and "not found" in d.reason


def test_attempt_2_runs_with_its_own_paths(project):
    layout, _ = make_run(project, ["claude"])
    assert worker_run(layout, "claude-analyst", env=fakes_env(OKSTRA_FAKE_MODE="crash")).returncode == 1
    add_attempt(layout, "claude-analyst")
    assert worker_run(layout, "claude-analyst").returncode == 0
    assert record(layout, "claude-analyst", 1).status == "error"
    second = record(layout, "claude-analyst", 2)
    assert second.status == "completed" and second.result_path.endswith("claude-analyst.attempt-2.md")
    assert layout.heartbeat_path("claude-analyst", 2).exists()


# -- the six failures observed on the real CLIs (docs/DESIGN.md §5), on fakes that behave like them --


@pytest.mark.parametrize("provider", ["claude", "codex", "antigravity"])
def test_observed_1_a_result_the_worker_wrote_is_kept_byte_for_byte(project, provider):
    layout, _ = make_run(project, [provider])
    worker = f"{provider}-analyst"
    written = "# My result\n\nkept exactly,   trailing spaces and no final newline"
    done = worker_run(layout, worker, env=fakes_env(OKSTRA_FAKE_MODE="write-result", OKSTRA_FAKE_ANSWER=written))
    assert done.returncode == 0, done.stderr
    assert layout.result_path(worker).read_bytes() == written.encode()
    d = record(layout, worker)
    assert d.status == "completed" and d.answer_path
    assert (project / d.answer_path).read_text().startswith("I wrote my result to ")


def test_observed_1_without_a_worker_result_the_final_message_becomes_the_result(project):
    layout, _ = make_run(project, ["claude"])
    assert worker_run(layout, "claude-analyst", env=fakes_env(OKSTRA_FAKE_ANSWER="the answer")).returncode == 0
    d = record(layout, "claude-analyst")
    assert layout.result_path("claude-analyst").read_text() == "the answer\n"
    assert (project / d.answer_path).read_text() == "the answer\n"


def test_observed_2_codex_reconnects_then_an_answer_is_a_completed_run(project):
    layout, _ = make_run(project, ["codex"])
    done = worker_run(layout, "codex-analyst", env=fakes_env(OKSTRA_FAKE_MODE="retry-then-ok", OKSTRA_FAKE_RETRIES="3"))
    assert done.returncode == 0, done.stderr
    d = record(layout, "codex-analyst")
    assert d.status == "completed" and d.reason is None and d.usage.output_tokens
    assert "analysis" in layout.result_path("codex-analyst").read_text()


def test_observed_3_a_codex_failure_reason_is_its_turn_failed_not_the_stdin_banner(project):
    layout, _ = make_run(project, ["codex"])
    assert worker_run(layout, "codex-analyst", env=fakes_env(OKSTRA_FAKE_MODE="server-error")).returncode == 1
    d = record(layout, "codex-analyst")
    assert d.reason.startswith("provider exited 1: exceeded retry limit, last status: 500 Internal Server Error")
    assert "Reading additional input" not in d.reason


@pytest.mark.parametrize(
    "mode,exit_code,reason",
    [
        ("rate-limit", 173, "rate-limited: You have exhausted your capacity on this model. Your quota will reset after 41s."),
        ("auth-error", 145, "provider exited 145: Request had invalid authentication credentials."),
        ("server-error", 244, "provider exited 244: Internal error encountered."),
    ],
)
def test_observed_3_gemini_errors_are_read_from_its_stderr_error_object(project, mode, exit_code, reason):
    layout, _ = make_run(project, ["antigravity"])
    assert worker_run(layout, "antigravity-analyst", env=fakes_env(OKSTRA_FAKE_MODE=mode)).returncode == 1
    d = record(layout, "antigravity-analyst")
    assert d.exit_code == exit_code and d.reason.startswith(reason), d.reason


def test_observed_3_a_gemini_killed_by_sigterm_says_so_though_it_exits_0(project):
    layout, _ = make_run(project, ["antigravity"])
    proc = start_worker_run(layout, "antigravity-analyst", fakes_env(OKSTRA_FAKE_MODE="stall"))
    try:
        child = child_pid_of(layout, "antigravity-analyst")
        os.kill(child, signal.SIGTERM)  # someone else stops the CLI (not worker-run)
        assert proc.wait(timeout=15) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
    d = record(layout, "antigravity-analyst")
    assert d.exit_code == 0 and d.reason.startswith("terminated by SIGTERM"), d.reason


@pytest.mark.parametrize(
    "provider,model_id,served",
    [("claude", "claude-opus-4-1", "claude-opus-4-8"), ("antigravity", "gemini-3-pro", "gemini-3.1-pro-preview")],
)
def test_observed_4_the_served_model_is_recorded_beside_the_asked_one(project, provider, model_id, served):
    layout, _ = make_run(project, [{"provider": provider, "modelId": model_id}])
    assert worker_run(layout, f"{provider}-analyst").returncode == 0
    d = record(layout, f"{provider}-analyst")
    assert (d.model_id, d.served_model, d.model_mismatch) == (model_id, served, True)


def test_observed_4_a_served_model_equal_to_the_asked_one_is_no_mismatch(project):
    layout, _ = make_run(project, [{"provider": "claude", "modelId": "claude-sonnet-4-5"}])
    assert worker_run(layout, "claude-analyst").returncode == 0
    d = record(layout, "claude-analyst")
    assert (d.served_model, d.model_mismatch) == ("claude-sonnet-4-5", False)


def test_observed_6_writes_a_hook_denied_are_recorded(project):
    (project / "README.md").write_text("original\n")
    deny = "echo 'okstra: writes outside the run are denied' >&2; exit 2"
    settings = {"hooks": {"PreToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": deny}]}]}}
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    layout, _ = make_run(project, ["claude"])
    assert worker_run(layout, "claude-analyst", env=fakes_env(OKSTRA_FAKE_MODE="denied-write")).returncode == 0
    d = record(layout, "claude-analyst")
    assert d.status == "completed"
    assert d.denials == ({"tool": "Write", "target": str(project / "README.md")},)
    assert (project / "README.md").read_text() == "original\n"


def test_claude_runs_with_its_retry_loop_bounded(project, tmp_path):
    layout, _ = make_run(project, ["claude"])
    argv_log = tmp_path / "argv.jsonl"
    assert worker_run(layout, "claude-analyst", env=fakes_env(OKSTRA_FAKE_ARGV_LOG=str(argv_log))).returncode == 0
    call = json.loads(argv_log.read_text().splitlines()[0])
    assert call["env"]["CLAUDE_CODE_MAX_RETRIES"] == "2"
    assert call["argv"][call["argv"].index("--output-format") + 1] == "stream-json" and "--verbose" in call["argv"]


def test_the_last_provider_event_is_recorded(project):
    layout, _ = make_run(project, ["codex"])
    assert worker_run(layout, "codex-analyst").returncode == 0
    d = record(layout, "codex-analyst")
    assert d.last_activity_at and d.last_event == "result: turn completed"


def test_a_flood_of_garbage_non_utf8_and_a_truncated_line_is_an_error_with_one_line(project, tmp_path):
    loud = tmp_path / "loudbin"
    loud.mkdir()
    script = loud / "claude"
    script.write_text(
        "#!/usr/bin/env python3\nimport sys\nout = sys.stdout.buffer\n"
        "for _ in range(20 * 1024):\n    out.write(b'\\xff\\xfe garbage }{ ' * 60 + b'\\n')\n"
        'out.write(b\'x\' * (3 << 20))\nout.write(b\'\\n{"type": "result", "result": "cut off\')\n'
    )
    script.chmod(0o755)
    layout, _ = make_run(project, ["claude"])
    env = fakes_env()
    env["PATH"] = f"{loud}{os.pathsep}{env['PATH']}"
    argv = [sys.executable, str(BIN / "worker-run"), "--run-manifest", str(layout.manifest), "--worker", "claude-analyst"]
    done = subprocess.run(argv, capture_output=True, env=env, timeout=120)  # bytes: the echo is not UTF-8
    assert done.returncode == 1, done.stderr
    d = record(layout, "claude-analyst")
    assert d.status == "error" and d.exit_code == 0
    assert d.reason == "no result file and no answer in output (stdout ends in a truncated JSON line)"
    assert layout.log_path("claude-analyst").stat().st_size > 841 * 20 * 1024 + (3 << 20)  # nothing lost: the log has it all


def _listing(root: Path) -> dict[str, tuple[str, int, str]]:
    """Every folder and file under `root` but `.git` (whose index git itself refreshes): kind, size, sha256."""
    import hashlib

    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] == ".git":
            continue
        if path.is_dir():
            found[str(rel)] = ("dir", 0, "")
        else:
            data = path.read_bytes()
            found[str(rel)] = ("file", len(data), hashlib.sha256(data).hexdigest())
    return found


@pytest.mark.parametrize(
    "case",
    [
        "bad attempt",
        "unknown worker",
        "result on a sidecar",
        "no result path",
        "log outside logs",
        "already running",
        "unknown provider",
    ],
)
def test_a_refused_worker_run_in_a_git_project_leaves_every_file_as_it_was(project, case):
    """Every check that can refuse runs before stage-check's snapshot is written (DESIGN §14):
    the project (a git work tree, so worker-run would snapshot it) is byte for byte the same."""
    layout, _ = make_run(project, ["claude"])
    args = ["--worker", "claude-analyst"]
    if case == "bad attempt":
        args += ["--attempt", "2"]
    elif case == "unknown worker":
        args = ["--worker", "nobody"]
    elif case == "result on a sidecar":
        set_dispatch(
            layout, "claude-analyst", result_path=layout.relative(layout.responses_dir / "user-response-analysis-001.md")
        )
    elif case == "no result path":
        set_dispatch(layout, "claude-analyst", result_path=None)
    elif case == "log outside logs":
        set_dispatch(layout, "claude-analyst", log_path=layout.relative(layout.results_dir / "claude-analyst.log"))
    elif case == "already running":
        me = os.getpid()
        set_dispatch(layout, "claude-analyst", status="in-progress", pid=me, pid_start_time=processes.start_time(me))
    else:
        set_dispatch(layout, "claude-analyst", provider="nope")
    before = _listing(project)
    done = subprocess.run(
        [sys.executable, str(BIN / "worker-run"), "--run-manifest", str(layout.manifest), *args],
        capture_output=True,
        text=True,
        env=fakes_env(),
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert _listing(project) == before
