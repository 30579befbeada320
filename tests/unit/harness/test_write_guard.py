"""The write-guard decision, fed real-shaped PreToolUse inputs for every tool, role and
escape attempt (DESIGN §10). Allow = exit 0 and nothing on stdout; deny = exit 0 and the
documented `permissionDecision: deny` JSON naming what is allowed."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from okstra.core import fsio
from okstra.harness import write_guard
from okstra.model import active_run
from unit.harness.hookdata import RUN_DIR, hook_input, sidecar_path, worker_env, write_active_run

REPO = Path(__file__).resolve().parents[3]
PLANNED = ("src/limiter.py", "src/api/**", "tests/**/test_*.py", "docs/", "notebooks/*.ipynb")
ANALYSIS_ROLES = ("analyst", "planner", "verifier", "critic", "report-writer")
FILE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")


def guard(stdin: bytes, env: dict[str, str]) -> tuple[int, dict | None]:
    out = io.StringIO()
    code = write_guard.main(stdin=io.BytesIO(stdin), stdout=out, env=env)
    text = out.getvalue()
    return code, (json.loads(text) if text else None)


def decide(root: Path, tool: str, *, path: str | Path = "", command: str = "", cwd: Path | None = None, env=None):
    full_env = {"CLAUDE_PROJECT_DIR": str(root), **(env or {})}
    code, doc = guard(hook_input(tool, cwd=cwd or root, path=path, command=command), full_env)
    assert code == 0, "the hook always exits 0 (exit 1 would fail open)"
    return doc


def reason_of(doc: dict | None) -> str:
    assert doc is not None, "expected a deny"
    out = doc["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    assert out["permissionDecision"] == "deny"
    assert out["permissionDecisionReason"].startswith("okstra: ")
    assert "allowed:" in out["permissionDecisionReason"]
    return out["permissionDecisionReason"]


@pytest.fixture
def stage(project: Path) -> Path:
    write_active_run(project, PLANNED, allowed=("pytest:*", "Bash(make test)"))
    return project


@pytest.fixture
def analysis(project: Path) -> Path:
    write_active_run(project, None)
    return project


# ------------------------------------------------------------------ no active run


@pytest.mark.parametrize("tool", FILE_TOOLS)
def test_no_active_run_allows_everything_for_every_file_tool(project, tool):
    assert decide(project, tool, path=project / "anything.py") is None
    assert decide(project, tool, path=sidecar_path(project)) is None


def test_no_active_run_allows_bash_and_even_worker_roles(project):
    assert decide(project, "Bash", command="echo x > /etc/motd", env=worker_env(project, "analyst")) is None


def test_malformed_input_with_no_run_allows_and_logs(project, isolated_env):
    code, doc = guard(b"{not json", {"CLAUDE_PROJECT_DIR": str(project)})
    assert (code, doc) == (0, None)
    log = isolated_env / ".okstra" / "logs" / "write-guard.log"
    assert "malformed hook input with no active run" in log.read_text()


def test_no_project_dir_falls_back_to_the_hook_cwd(stage):
    sub = stage / "src" / "deep"
    sub.mkdir(parents=True)
    code, doc = guard(hook_input("Write", cwd=sub, path=stage / "README.md"), {})
    assert "outside the planned paths" in reason_of(doc)
    code, doc = guard(hook_input("Write", cwd=sub, path="../limiter.py"), {})
    assert doc is None


# ------------------------------------------------------------------ the lead during a stage


@pytest.mark.parametrize("tool", FILE_TOOLS)
@pytest.mark.parametrize(
    "rel",
    ["src/limiter.py", "src/api/v1/routes.py", "src/api", "tests/unit/test_limiter.py", "docs/guide.md", "notebooks/demo.ipynb"],
)
def test_the_lead_may_write_planned_paths(stage, tool, rel):
    assert decide(stage, tool, path=stage / rel) is None


@pytest.mark.parametrize("tool", FILE_TOOLS)
def test_the_lead_is_denied_outside_the_planned_paths_with_what_is_allowed(stage, tool):
    reason = reason_of(decide(stage, tool, path=stage / "src" / "other.py"))
    assert "src/other.py is outside the planned paths of approved stage 2 (Limiter core)" in reason
    assert "src/limiter.py, src/api/**" in reason
    assert "okstra's own files under .okstra/" in reason


@pytest.mark.parametrize(
    "rel", ["src/limiterXpy", "tests/test_x.py.bak", "tests/unit/helper.py", "notebooks/sub/x.ipynb", "src/ap"]
)
def test_globs_match_segment_by_segment(stage, rel):
    assert decide(stage, "Write", path=stage / rel) is not None


def test_the_lead_may_write_okstra_run_files(stage):
    assert decide(stage, "Write", path=stage / RUN_DIR / "reports" / "final-report-implementation-001.data.json") is None
    assert decide(stage, "Edit", path=stage / RUN_DIR / "prompts" / "codex-verifier.attempt-2.md") is None


def test_relative_paths_resolve_against_the_hook_cwd(stage):
    assert decide(stage, "Write", path="limiter.py", cwd=stage / "src") is None
    assert decide(stage, "Write", path="limiter.py", cwd=stage) is not None


def test_dot_dot_escapes_are_resolved_first(stage):
    reason = reason_of(decide(stage, "Write", path=stage / "src" / "api" / ".." / ".." / "setup.py"))
    assert "setup.py is outside" in reason
    assert decide(stage, "Write", path=str(stage / "src/api/../../../outside.py")) is not None


def test_an_absolute_path_elsewhere_is_denied(stage, tmp_path):
    assert decide(stage, "Write", path=tmp_path / "elsewhere.py") is not None
    assert decide(stage, "Write", path="/etc/cron.d/evil") is not None
    assert decide(stage, "Write", path="~/.bashrc") is not None


def test_a_symlink_inside_an_allowed_folder_pointing_outside_is_denied(stage, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (stage / "src" / "api").mkdir(parents=True)
    (stage / "src" / "api" / "link").symlink_to(outside)
    (stage / "src" / "api" / "file-link.py").symlink_to(stage / "setup.py")
    assert "outside" in reason_of(decide(stage, "Write", path=stage / "src" / "api" / "link" / "x.py"))
    assert "setup.py is outside" in reason_of(decide(stage, "Edit", path=stage / "src" / "api" / "file-link.py"))


def test_a_symlink_pointing_into_the_plan_is_judged_by_its_target(stage):
    (stage / "src").mkdir()
    (stage / "shortcut.py").symlink_to(stage / "src" / "limiter.py")
    assert decide(stage, "Write", path=stage / "shortcut.py") is None


def test_case_tricks_do_not_match_planned_paths_on_a_case_sensitive_filesystem(stage):
    assert decide(stage, "Write", path=stage / "SRC" / "limiter.py") is not None
    assert decide(stage, "Write", path=stage / "src" / "Limiter.py") is not None
    assert decide(stage, "Write", path=stage / "Docs" / "guide.md") is not None


def test_a_compacted_active_run_is_hydrated_and_its_parts_are_protected(project):
    stage_doc = {"number": 3, "title": "API", "plannedPaths": ["src/api/**"], "baseCommit": None}
    fsio.write_json(project / RUN_DIR / "stage-3.json", stage_doc)
    run = write_active_run(project, ("ignored",)).to_dict()
    run["approvedStage"] = {"$ref": f"{RUN_DIR}/stage-3.json"}
    active_run.write_file(project, run)
    assert decide(project, "Write", path=project / "src" / "api" / "x.py") is None
    assert "stage 3 (API)" in reason_of(decide(project, "Write", path=project / "ignored"))
    assert "would change the active run" in reason_of(decide(project, "Edit", path=project / RUN_DIR / "stage-3.json"))
    assert "would change the active run" in reason_of(decide(project, "Write", path=project / ".okstra" / "active-run.json"))


# ------------------------------------------------------------------ sidecars and REPORT AUTHORING


@pytest.mark.parametrize("tool", FILE_TOOLS)
@pytest.mark.parametrize("role", ["", "implementer", "analyst", "report-writer"])
def test_nobody_writes_a_sidecar(stage, tool, role):
    env = worker_env(stage, role) if role else {}
    reason = reason_of(decide(stage, tool, path=sidecar_path(stage), env=env))
    assert "user-response sidecar, which only the user writes" in reason


def test_the_sidecar_rule_holds_without_a_stage_too(analysis):
    assert decide(analysis, "Write", path=analysis / "anything.py") is None
    assert decide(analysis, "Write", path=sidecar_path(analysis)) is not None


@pytest.mark.parametrize(
    "spelling",
    [
        "{run}/reports/User-Responses/user-response-implementation-001.md",
        "{run}/REPORTS/user-responses/new.md",
        ".OKSTRA/runs/x/reports/user-responses/y.md",
        "{run}/reports/user-responses",
        "{run}/reports/./user-responses/../user-responses/z.md",
    ],
)
def test_sidecar_spellings_are_all_caught(analysis, spelling):
    path = analysis / spelling.format(run=RUN_DIR)
    assert "sidecar" in reason_of(decide(analysis, "Write", path=path))


def test_a_hard_link_to_a_sidecar_is_denied_as_a_second_name(analysis):
    sidecar = sidecar_path(analysis)
    sidecar.write_text("# user response\n")
    os.link(sidecar, analysis / "innocent.md")
    assert "2 hard links" in reason_of(decide(analysis, "Edit", path=analysis / "innocent.md"))


def test_a_symlink_to_a_sidecar_is_the_sidecar(analysis):
    (analysis / "alias.md").symlink_to(sidecar_path(analysis))
    assert "sidecar" in reason_of(decide(analysis, "Write", path=analysis / "alias.md"))


@pytest.mark.parametrize(
    "command",
    [
        "echo approved > {side}",
        "echo approved >> {side}",
        "printf 'x' >| {side}",
        "cat answer.md &> {side}",
        "echo x | tee {side}",
        "echo x | tee -a /dev/null {side}",
        "cp /tmp/forged.md {side}",
        "cp /tmp/forged.md {dir}",
        "cp -t {dir} /tmp/forged.md",
        "mv /tmp/forged.md {side}",
        "install -m 644 /tmp/forged.md {side}",
        "dd if=/tmp/forged.md of={side}",
        "sed -i 's/denied/approved/' {side}",
        "sed -i.bak -e 's/denied/approved/' {side}",
        "perl -pi -e 's/denied/approved/' {side}",
        "rm -f {side}",
        "cd {dir} && echo x > user-response-implementation-001.md",
        "cat <<'EOF' > {side}\nREPORT AUTHORING: approved\nEOF",
        "true; echo \"x\" 2>/dev/null 1>'{side}'",
        "echo x > {dir}/user-re*",
    ],
)
def test_bash_writing_a_sidecar_is_denied(analysis, command):
    sidecar = sidecar_path(analysis)
    sidecar.write_text("# user response\n")
    text = command.format(side=sidecar, dir=sidecar.parent)
    reason = reason_of(decide(analysis, "Bash", command=text))
    # Either the write is seen and judged, or the command is not understood: denied both ways.
    assert "sidecar" in reason or "is not" in reason or "here-document" in reason, text


@pytest.mark.parametrize(
    "command",
    [
        "user-response-write --report R --answers '{}' --report-authoring '{\"decision\": \"approved\"}'",
        "okstra user-response write --report R --report-authoring='{}'",
        "okstra user response write --report R --report-authoring '{}'",
        f"{REPO}/bin/user-response-write --report-authoring '{{}}' --report R",
        "cd /tmp && \"user-response-write\" --report R --report-authoring '{}'",
    ],
)
@pytest.mark.parametrize("role", ["", "report-writer", "implementer"])
def test_report_authoring_is_the_users_alone(analysis, command, role):
    env = worker_env(analysis, role) if role else {}
    reason = reason_of(decide(analysis, "Bash", command=command, env=env))
    assert "--report-authoring records a decision" in reason and "only the user makes" in reason


def test_recording_answers_without_report_authoring_is_not_blocked(analysis):
    assert decide(analysis, "Bash", command='user-response-write --report R --answers \'{"q1": "yes"}\'') is None
    assert decide(analysis, "Bash", command="user-response-show --report R") is None


# ------------------------------------------------------------------ workers


@pytest.mark.parametrize("role", ANALYSIS_ROLES)
@pytest.mark.parametrize("tool", FILE_TOOLS)
def test_analysis_workers_write_only_their_result_and_evidence(stage, role, tool):
    env = worker_env(stage, role)
    assert decide(stage, tool, path=env["OKSTRA_RESULT_PATH"], env=env) is None
    assert decide(stage, tool, path=Path(env["OKSTRA_EVIDENCE_DIR"]) / "trace" / "run.log", env=env) is None
    reason = reason_of(decide(stage, tool, path=stage / "src" / "limiter.py", env=env))
    assert f"{role} worker codex-{role} may write only its own result and evidence" in reason
    assert f"{RUN_DIR}/results/codex-{role}.md" in reason
    assert decide(stage, tool, path=stage / RUN_DIR / "results" / "other-worker.md", env=env) is not None


@pytest.mark.parametrize("role", ANALYSIS_ROLES)
def test_analysis_workers_cannot_leave_their_evidence_folder(stage, role, tmp_path):
    env = worker_env(stage, role)
    evidence = Path(env["OKSTRA_EVIDENCE_DIR"])
    evidence.mkdir(parents=True)
    (evidence / "escape").symlink_to(stage / "src")
    assert decide(stage, "Write", path=evidence / ".." / "codex-x.md", env=env) is not None
    assert decide(stage, "Write", path=evidence / "escape" / "limiter.py", env=env) is not None
    assert decide(stage, "Bash", command=f"echo x > {evidence}/../../../../../notes.md", env=env) is not None
    assert decide(stage, "Bash", command=f"echo scratch > {tmp_path}/scratch.txt", env=env) is None  # the temp folder
    assert decide(stage, "Bash", command=f"ls -l > {evidence}/ls.txt 2>&1", env=env) is None


def test_analysis_workers_are_guarded_without_a_stage_too(analysis):
    env = worker_env(analysis, "analyst")
    assert decide(analysis, "Write", path=analysis / "notes.md", env=env) is not None
    assert decide(analysis, "Write", path=env["OKSTRA_RESULT_PATH"], env=env) is None


def test_a_worker_without_its_paths_in_the_environment_may_write_nothing(stage):
    env = {"OKSTRA_WORKER_ROLE": "verifier", "OKSTRA_WORKER_ID": "kimi-verifier"}
    reason = reason_of(decide(stage, "Write", path=stage / "notes" / "kimi-verifier.md", env=env))
    assert "OKSTRA_RESULT_PATH and OKSTRA_EVIDENCE_DIR are not set" in reason
    reason = reason_of(decide(stage, "Write", path=stage / RUN_DIR / "results" / "kimi-verifier.md", env=env))
    assert "okstra's state" in reason


def test_the_implementer_writes_planned_paths_and_its_own_files(stage):
    env = worker_env(stage, "implementer")
    assert decide(stage, "Edit", path=stage / "src" / "limiter.py", env=env) is None
    assert decide(stage, "Write", path=env["OKSTRA_RESULT_PATH"], env=env) is None
    reason = reason_of(decide(stage, "Write", path=stage / "Makefile", env=env))
    assert "by implementer worker codex-implementer is outside the planned paths of approved stage 2" in reason


def test_an_implementer_outside_a_stage_writes_only_its_own_files(analysis):
    env = worker_env(analysis, "implementer")
    reason = reason_of(decide(analysis, "Write", path=analysis / "src" / "limiter.py", env=env))
    assert "no implementation stage is approved" in reason


# ------------------------------------------------------------------ Bash during a stage


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q 2>&1 | tail -n 20",
        "git status --short && git diff --stat",
        "echo x > src/limiter.py",
        "ls > /dev/null 2>&1",
        "make test > /tmp/test.log 2>&1",
        "cd src/api && echo ok > routes.py",
        "sed -n '1,20p' Makefile",
        "cp README.md docs/",
        "grep -rn 'user-responses' lib/ | head",
        "cat < Makefile | wc -l",
    ],
)
def test_bash_commands_within_scope_pass(stage, command):
    (stage / "docs").mkdir(exist_ok=True)
    assert decide(stage, "Bash", command=command) is None, command


@pytest.mark.parametrize(
    "command",
    [
        "echo x > Makefile",
        "echo x | tee -a README.md",
        "cp src/limiter.py setup.py",
        "mv src/limiter.py lib/limiter.py",
        "sed -i 's/a/b/' Makefile",
        "cd src && echo x > ../setup.py",
        "touch src/new_module.py",
        "echo x >'src/a b.py'",
    ],
)
def test_bash_writes_outside_the_stage_are_denied(stage, command):
    reason = reason_of(decide(stage, "Bash", command=command))
    assert "outside the planned paths" in reason or "sed -i writes a file" in reason, command


# ------------------------------------------------------------------ failures while a run is active


def test_malformed_input_with_an_active_run_is_denied_with_the_reason(stage):
    for stdin, why in [
        (b"{oops", "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b"\xff\xfe", "not UTF-8"),
        (json.dumps({"tool_name": "Write"}).encode(), "no tool_input"),
    ]:
        code, doc = guard(stdin, {"CLAUDE_PROJECT_DIR": str(stage)})
        assert code == 0
        assert why in reason_of(doc)


@pytest.mark.parametrize("tool", FILE_TOOLS)
def test_a_file_tool_without_its_path_is_denied(stage, tool):
    assert "no usable" in reason_of(decide(stage, tool, path=""))


def test_an_unreadable_active_run_denies_naming_the_file(project):
    (project / ".okstra").mkdir()
    (project / ".okstra" / "active-run.json").write_text('{"runId": ')
    reason = reason_of(decide(project, "Write", path=project / "x.py"))
    assert "active-run.json is not valid JSON: line 1 column 11" in reason


def test_an_internal_error_with_an_active_run_denies(stage, monkeypatch):
    def boom(*_):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(write_guard, "decide", boom)
    assert "internal error in the write-guard (RuntimeError: kaboom)" in reason_of(decide(stage, "Write", path=stage / "x"))


def test_tools_that_do_not_write_are_allowed(stage):
    stdin = json.loads(hook_input("Write", cwd=stage, path=stage / "x"))
    stdin["tool_name"] = "Read"
    code, doc = guard(json.dumps(stdin).encode(), {"CLAUDE_PROJECT_DIR": str(stage)})
    assert (code, doc) == (0, None)


# ------------------------------------------------------------------ the hot path


def test_a_decision_loads_no_heavy_module(stage):
    """The hook runs on every edit: no jsonschema/jinja2/yaml, nor json/re/dataclasses/pathlib."""
    code = (
        "import io, sys\n"
        f"sys.path.insert(0, {str(REPO / 'lib')!r})\n"
        "from okstra.harness import write_guard\n"
        "out = io.StringIO()\n"
        "write_guard.main(stdin=sys.stdin.buffer, stdout=out)\n"
        "heavy = ['jsonschema', 'jinja2', 'yaml', 'json', 're', 'dataclasses', 'pathlib', 'typing', 'fnmatch', 'os', '__future__']\n"
        "print(repr(out.getvalue()), [m for m in heavy if m in sys.modules])\n"
    )
    for target in ("src/api/v2/x.py", "Makefile"):
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", code],
            input=hook_input("Edit", cwd=stage, path=stage / target),
            capture_output=True,
            env={"CLAUDE_PROJECT_DIR": str(stage), "PATH": os.environ["PATH"]},
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        decision, loaded = done.stdout.decode().rsplit(" ", 1)
        assert loaded.strip() == "[]", f"hot path imported {loaded.strip()} deciding {target}"
        assert ("deny" in decision) == (target == "Makefile")


@pytest.mark.parametrize(
    "stdin", [b"{broken", b'{"tool_name": "Write", "tool_input": {"file_path": "\\q"}}', b"[1,", b"{} extra"]
)
def test_malformed_input_is_denied_in_a_bare_interpreter_too(stage, stdin):
    """With nothing but the hot path loaded (json.decoder absent), a bad input still denies."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(REPO / "hooks" / "write-guard.py")],
        input=stdin,
        capture_output=True,
        env={"CLAUDE_PROJECT_DIR": str(stage), "PATH": os.environ["PATH"]},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "the hook input is not usable (stdin is not JSON: line 1 column" in reason_of(json.loads(done.stdout))


def test_the_light_json_reader_agrees_with_json():
    from okstra.core import jsonlite

    for text in ['{"a": [1, 2.5, -3e2, "x\\u00e9", null, true, false, {}]}', "  [] ", '"s"', "NaN"]:
        assert repr(jsonlite.loads(text)) == repr(json.loads(text))
    for bad in ["", "{", '{"a" 1}', "[1,]", "1 2", '"\\x"', "\ufeff{}"]:
        with pytest.raises(jsonlite.JSONError, match=r"line \d+ column \d+"):
            jsonlite.loads(bad)
    assert json.loads(jsonlite.dumps_flat({"a": {"b": 'q"uote\n é'}})) == {"a": {"b": 'q"uote\n é'}}


def test_the_hook_script_itself_imports_nothing_heavy(stage):
    """What the real door runs, start to end: no os, json, re, dataclasses, pathlib, typing."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", str(REPO / "hooks" / "write-guard.py")],
        input=hook_input("Write", cwd=stage, path=stage / "src" / "limiter.py"),
        capture_output=True,
        env={"CLAUDE_PROJECT_DIR": str(stage), "PATH": os.environ["PATH"]},
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == b""
    loaded = {line.rsplit("|", 1)[1].strip() for line in done.stderr.decode().splitlines() if line.startswith("import time:")}
    assert "okstra.harness.write_guard" in loaded
    heavy = {"os", "json", "re", "dataclasses", "pathlib", "typing", "fnmatch", "jsonschema", "jinja2", "yaml", "__future__"}
    assert loaded & heavy == set()
