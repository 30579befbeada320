#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $stderr
# hooks/write-guard: the real sh door fed Claude Code's PreToolUse JSON on stdin.
# Allow = exit 0 and no output; deny = exit 0 and permissionDecision "deny" JSON.

load test_helper

setup() {
  okstra_setup
  HOOK="$REPO_ROOT/hooks/write-guard"
  FIXTURES="$REPO_ROOT/tests/fixtures/hooks"
  RUN_DIR=".okstra/runs/feature--rate-limit--r001"
  export CLAUDE_PROJECT_DIR="$PROJECT"
}

# hook_input TOOL PATH-OR-COMMAND: a recorded input with this project's paths.
hook_input() {
  python3 - "$FIXTURES" "$1" "$2" "$PROJECT" <<'PY'
import json, sys
fixtures, tool, value, cwd = sys.argv[1:]
name = {"Write": "write", "Edit": "edit", "MultiEdit": "multiedit", "NotebookEdit": "notebookedit", "Bash": "bash"}[tool]
doc = json.load(open(f"{fixtures}/pretooluse-{name}.json"))
doc["cwd"] = cwd
key = {"Bash": "command", "NotebookEdit": "notebook_path"}.get(tool, "file_path")
doc["tool_input"][key] = value
print(json.dumps(doc))
PY
}

# active_run [PLANNED...]: write .okstra/active-run.json through the model record.
active_run() {
  PYTHONPATH="$REPO_ROOT/lib" python3 - "$PROJECT" "$@" <<'PY'
import sys
from pathlib import Path
from okstra.model import active_run
from okstra.model.active_run import ActiveRun, ApprovedStage
root, planned = Path(sys.argv[1]), tuple(sys.argv[2:])
run_id = "feature--rate-limit--r001"
stage = ApprovedStage(2, "Limiter core", planned, None) if planned else None
run = ActiveRun(run_id, "feature/rate-limit", "implementation" if planned else "analysis", f".okstra/runs/{run_id}",
                f".okstra/runs/{run_id}/run-manifest.json", "implementation" if planned else "analysis", stage)
active_run.write_file(root, run.to_dict())
(root / run.run_dir / "reports" / "user-responses").mkdir(parents=True, exist_ok=True)
PY
}

@test "allows at once with no output when the project has no active run" {
  input=$(hook_input Write "$PROJECT/src/app.py")
  run --separate-stderr "$HOOK" <<<"$input"
  assert_success
  assert_output ""
  [ -z "$stderr" ]
}

@test "with no active run even garbage on stdin is allowed without reading it" {
  run --separate-stderr "$HOOK" <<<"this is not json"
  assert_success
  assert_output ""
}

@test "allows a planned path during a stage" {
  active_run "src/app.py" "src/api/**"
  input=$(hook_input Edit "$PROJECT/src/api/v1/routes.py")
  run --separate-stderr "$HOOK" <<<"$input"
  assert_success
  assert_output ""
}

@test "denies an unplanned path with Claude Code's deny JSON naming what is allowed" {
  active_run "src/app.py" "src/api/**"
  input=$(hook_input Write "$PROJECT/setup.py")
  run --separate-stderr "$HOOK" <<<"$input"
  assert_success
  run python3 -c 'import json,sys; o=json.load(sys.stdin)["hookSpecificOutput"]; print(o["hookEventName"], o["permissionDecision"]); print(o["permissionDecisionReason"])' <<<"$output"
  assert_line --index 0 "PreToolUse deny"
  assert_line --index 1 --partial "okstra: Write to setup.py is outside the planned paths of approved stage 2 (Limiter core); allowed: the stage's planned paths src/app.py, src/api/**"
}

@test "denies a Bash redirection onto a user-response sidecar" {
  active_run
  input=$(hook_input Bash "echo approved > $RUN_DIR/reports/user-responses/user-response-analysis-001.md")
  run "$HOOK" <<<"$input"
  assert_success
  assert_output --partial '"permissionDecision":"deny"'
  assert_output --partial "user-response sidecar, which only the user writes"
}

@test "denies user-response-write --report-authoring run by the lead" {
  active_run
  input=$(hook_input Bash "okstra user-response write --report R --report-authoring '{\"decision\":\"approved\"}'")
  run "$HOOK" <<<"$input"
  assert_success
  assert_output --partial "--report-authoring records a decision"
}

@test "denies user-response-write --scope-waiver run by a worker, naming the block" {
  active_run
  input=$(hook_input Bash "user-response-write --report R --answers '{}' --scope-waiver '{\"stage\": 2, \"paths\": [\"x\"], \"reason\": \"r\"}'")
  run env OKSTRA_WORKER_ROLE=implementer OKSTRA_WORKER_ID=codex-implementer "$HOOK" <<<"$input"
  assert_success
  assert_output --partial '"permissionDecision":"deny"'
  assert_output --partial "--scope-waiver records a decision (SCOPE WAIVER), which only the user makes"
}

@test "allows okstra completion and other read-only okstra commands during a run" {
  active_run
  for command in "okstra completion bash" "okstra help team status" "okstra team status --json" "okstra runs prune --older-than 30d --dry-run"; do
    input=$(hook_input Bash "$command")
    run "$HOOK" <<<"$input"
    assert_success
    assert_output ""
  done
}

@test "a worker's environment confines it to its result and evidence" {
  active_run
  input=$(hook_input Write "$PROJECT/src/app.py")
  run env OKSTRA_WORKER_ROLE=verifier OKSTRA_WORKER_ID=codex-verifier \
    OKSTRA_RESULT_PATH="$PROJECT/$RUN_DIR/results/codex-verifier.md" \
    OKSTRA_EVIDENCE_DIR="$PROJECT/$RUN_DIR/results/codex-verifier.evidence" "$HOOK" <<<"$input"
  assert_success
  assert_output --partial "verifier worker codex-verifier may write only its own result and evidence"
}

@test "malformed input during an active run is denied, not silently allowed" {
  active_run "src/app.py"
  run --separate-stderr "$HOOK" <<<"{broken"
  assert_success
  assert_output --partial '"permissionDecision":"deny"'
  assert_output --partial "the hook input is not usable"
}

@test "without CLAUDE_PROJECT_DIR the hook finds the run from its cwd" {
  active_run "src/app.py"
  unset CLAUDE_PROJECT_DIR
  mkdir -p "$PROJECT/src"
  input=$(hook_input Write "$PROJECT/Makefile")
  cd "$PROJECT/src"
  run "$HOOK" <<<"$input"
  assert_success
  assert_output --partial '"permissionDecision":"deny"'
}

@test "the door works through a symlink and from an installed prefix" {
  active_run "src/app.py"
  "$REPO_ROOT/install.sh" --prefix "$BATS_TEST_TMPDIR/prefix" >/dev/null
  ln -s "$BATS_TEST_TMPDIR/prefix/hooks/write-guard" "$BATS_TEST_TMPDIR/guard-link"
  input=$(hook_input Write "$PROJECT/Makefile")
  run env -i HOME="$HOME" PATH=/usr/bin:/bin CLAUDE_PROJECT_DIR="$PROJECT" "$BATS_TEST_TMPDIR/guard-link" <<<"$input"
  assert_success
  assert_output --partial '"permissionDecision":"deny"'
  input=$(hook_input Write "$PROJECT/src/app.py")
  run env -i HOME="$HOME" PATH=/usr/bin:/bin CLAUDE_PROJECT_DIR="$PROJECT" "$BATS_TEST_TMPDIR/guard-link" <<<"$input"
  assert_success
  assert_output ""
}

@test "moving the active-run file away does not switch the guard off (the seal stays)" {
  active_run src/limiter.py
  mv "$PROJECT/.okstra/active-run.json" "$BATS_TEST_TMPDIR/away.json"
  input=$(hook_input Write "$PROJECT/setup.py")
  run "$HOOK" <<<"$input"
  assert_success
  assert_output --partial '"permissionDecision":"deny"'
  assert_output --partial "is missing while"
}

@test "a FIFO in the active-run file's place is denied at once, without blocking" {
  active_run src/limiter.py
  rm "$PROJECT/.okstra/active-run.json"
  mkfifo "$PROJECT/.okstra/active-run.json"
  input=$(hook_input Write "$PROJECT/src/limiter.py")
  run timeout 5 "$HOOK" <<<"$input"
  assert_success
  assert_output --partial "is a FIFO"
}

@test "a Bash command the guard cannot read is denied with what is allowed" {
  active_run src/limiter.py
  # shellcheck disable=SC2016  # the $ is the point: the guard must see it unexpanded
  input=$(hook_input Bash 'f=x; echo hi > $f')
  run "$HOOK" <<<"$input"
  assert_success
  assert_output --partial '"permissionDecision":"deny"'
  assert_output --partial "allowed: in Bash during a run, read-only tools"
}
