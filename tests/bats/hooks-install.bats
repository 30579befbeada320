#!/usr/bin/env bats
# shellcheck disable=SC2154,SC2088  # bats sets $stderr; "~/..." is literal text in settings
# hooks-install: merge okstra's hooks into a project's .claude/settings.json and take
# them out again, keeping everything the user has.

load test_helper

setup() {
  okstra_setup
  SETTINGS="$PROJECT/.claude/settings.json"
  mkdir -p "$PROJECT/.claude"
}

user_settings() {
  cat > "$SETTINGS" <<'JSON'
{
  "permissions": {"allow": ["Bash(make test)"], "deny": ["Read(./.env)"]},
  "env": {"DEBUG": "1"},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Write|Edit|MultiEdit|NotebookEdit|Bash", "hooks": [{"type": "command", "command": "~/bin/my-guard"}]}
    ],
    "SessionStart": [
      {"matcher": "compact", "hooks": [{"type": "command", "command": "echo remember the tests"}]}
    ]
  },
  "sandbox": {"enabled": true, "filesystem": {"allowWrite": ["~/.codex"]}}
}
JSON
}

@test "merges okstra's hooks beside the user's own on the same matchers" {
  user_settings
  run hooks-install --project "$PROJECT" --json
  assert_success
  run python3 - "$SETTINGS" "$REPO_ROOT" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
pre = [h["command"] for e in doc["hooks"]["PreToolUse"] for h in e["hooks"]]
start = [h["command"] for e in doc["hooks"]["SessionStart"] for h in e["hooks"]]
print(pre[0]); print(pre[1]); print(start[0]); print(start[1])
print(doc["sandbox"]["filesystem"]["allowWrite"], doc["permissions"]["allow"], doc["env"])
PY
  assert_line --index 0 "~/bin/my-guard"
  assert_line --index 1 "$REPO_ROOT/hooks/write-guard # okstra-hook"
  assert_line --index 2 "echo remember the tests"
  assert_line --index 3 "$REPO_ROOT/hooks/compact-reminder # okstra-hook"
  assert_line --index 4 "['~/.codex', '~/.gemini'] ['Bash(make test)'] {'DEBUG': '1'}"
}

@test "running it twice leaves the same bytes as once" {
  user_settings
  hooks-install --project "$PROJECT" >/dev/null
  first=$(sha256sum "$SETTINGS")
  run hooks-install --project "$PROJECT"
  assert_success
  assert_output --partial "already installed (unchanged)"
  [ "$(sha256sum "$SETTINGS")" = "$first" ]
}

@test "uninstall gives back the user's settings, keeping the ~/.codex they had" {
  user_settings
  before=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), sort_keys=True))' "$SETTINGS")
  hooks-install --project "$PROJECT" >/dev/null
  run hooks-install --project "$PROJECT" --uninstall
  assert_success
  assert_output "$SETTINGS: okstra hooks removed"
  after=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), sort_keys=True))' "$SETTINGS")
  [ "$before" = "$after" ]
  [ ! -e "$PROJECT/.okstra" ]
}

@test "a malformed settings file exits 2 naming file, line and column, and is left untouched" {
  printf '{\n  "permissions": {\n    "allow": ["Bash(ls)",]\n  }\n}\n' > "$SETTINGS"
  before=$(tree_snapshot "$PROJECT")
  run --separate-stderr hooks-install --project "$PROJECT"
  assert_failure 2
  [ "$stderr" = "hooks-install: $SETTINGS: not valid JSON at line 3 column 26: Expecting value; fix the JSON and run again" ]
  [ "$(tree_snapshot "$PROJECT")" = "$before" ]
}

@test "the installed command points the hooks into its own prefix, and they run" {
  "$REPO_ROOT/install.sh" --prefix "$BATS_TEST_TMPDIR/prefix" >/dev/null
  run "$BATS_TEST_TMPDIR/prefix/bin/hooks-install" --project "$PROJECT" --json
  assert_success
  assert_output --partial "\"prefix\": \"$BATS_TEST_TMPDIR/prefix\""
  command=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hooks"]["PreToolUse"][0]["hooks"][0]["command"])' "$SETTINGS")
  [ "$command" = "$BATS_TEST_TMPDIR/prefix/hooks/write-guard # okstra-hook" ]
  # Claude Code runs the command through sh -c: it must allow at once with no run.
  run env CLAUDE_PROJECT_DIR="$PROJECT" sh -c "$command" <<<'{"tool_name":"Write","tool_input":{"file_path":"/x"}}'
  assert_success
  assert_output ""
}

@test "a prefix with no okstra hooks exits 2 and writes nothing" {
  before=$(tree_snapshot "$PROJECT")
  run --separate-stderr hooks-install --project "$PROJECT" --prefix "$BATS_TEST_TMPDIR"
  assert_failure 2
  [[ "$stderr" == "hooks-install: --prefix: $BATS_TEST_TMPDIR/hooks/write-guard is missing or not executable"* ]]
  [ "$(tree_snapshot "$PROJECT")" = "$before" ]
}

@test "a missing --project is a usage error" {
  run --separate-stderr hooks-install
  assert_failure 2
  [[ "$stderr" == "hooks-install: the following arguments are required: --project"* ]]
}
