#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $stderr
# okstra as a Claude Code plugin: a claude-shaped hook runner loads the plugin's
# hooks/hooks.json from the repository (fresh HOME, nothing installed), expands
# ${CLAUDE_PLUGIN_ROOT}, and gets the write-guard's decision.

load test_helper

setup() {
  okstra_setup
  RUNNER="$REPO_ROOT/tests/fixtures/claude_hook_runner.py"
}

pretooluse() { # <file_path>
  printf '{"session_id":"s1","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"%s","content":"x"},"tool_use_id":"t1"}' "$PROJECT" "$1"
}

@test "a plugin-loaded session allows every write when the project has no run" {
  run python3 "$RUNNER" --plugin-dir "$REPO_ROOT" --project "$PROJECT" <<<"$(pretooluse "$PROJECT/src/app.py")"
  assert_success
  assert_line --index 0 "ran: \"$REPO_ROOT/hooks/write-guard\" -> exit 0"
  assert_line --index 1 "decision: allow"
}

@test "a plugin-loaded session gets the write-guard's deny during a run" {
  render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude >/dev/null 2>&1
  sidecar="$PROJECT/.okstra/runs/feature--demo--r001/reports/user-responses/forged.md"
  run python3 "$RUNNER" --plugin-dir "$REPO_ROOT" --project "$PROJECT" <<<"$(pretooluse "$sidecar")"
  assert_success
  assert_line --index 1 --regexp "^decision: deny: okstra: Write to .*user-responses/forged.md touches a user-response sidecar"
}

@test "a plugin session finds okstra's commands with nothing written to any settings file" {
  input=$(printf '{"session_id":"s1","cwd":"%s","hook_event_name":"SessionStart","source":"startup"}' "$PROJECT")
  run env PATH=/usr/bin:/bin python3 "$RUNNER" --plugin-dir "$REPO_ROOT" --project "$PROJECT" <<<"$input"
  assert_success
  assert_line "env: export PATH='$REPO_ROOT/bin':\"\$PATH\""
  [ ! -e "$HOME/.claude" ] && [ ! -e "$PROJECT/.claude" ]
}

@test "a plugin session prefers the installed okstra over the plugin's own bin/" {
  "$REPO_ROOT/install.sh" >/dev/null
  input=$(printf '{"session_id":"s1","cwd":"%s","hook_event_name":"SessionStart","source":"startup"}' "$PROJECT")
  run env PATH=/usr/bin:/bin python3 "$RUNNER" --plugin-dir "$REPO_ROOT" --project "$PROJECT" <<<"$input"
  assert_success
  assert_line "env: export PATH='$HOME/.okstra/bin':\"\$PATH\""
}

@test "after a compaction the plugin's reminder reaches the lead" {
  render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude >/dev/null 2>&1
  input=$(printf '{"session_id":"s1","cwd":"%s","hook_event_name":"SessionStart","source":"compact"}' "$PROJECT")
  run python3 "$RUNNER" --plugin-dir "$REPO_ROOT" --project "$PROJECT" <<<"$input"
  assert_success
  assert_line --partial "context: "
  assert_output --partial "feature--demo--r001"
}

@test "claude plugin validate --strict passes on both manifests where claude is installed" {
  if ! command -v claude >/dev/null 2>&1; then
    # Without claude the schema check below is the check (tests/unit/harness/test_plugin.py runs it too).
    run "$REPO_ROOT/.venv/bin/python" -m pytest -q -p no:cacheprovider --import-mode=importlib \
      "$REPO_ROOT/tests/unit/harness/test_plugin.py" -k schema
    assert_success
    return
  fi
  run claude plugin validate --strict "$REPO_ROOT"
  assert_success
  run claude plugin validate --strict "$REPO_ROOT/.claude-plugin/marketplace.json"
  assert_success
}
