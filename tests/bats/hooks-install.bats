#!/usr/bin/env bats
# shellcheck disable=SC2154,SC2088  # bats sets $stderr; "~/..." is literal text in settings
# hooks-install: merge okstra's hooks into a project's .claude/settings.local.json (or,
# with --shared, settings.json) and take them out again, keeping everything the user has.

load test_helper

setup() {
  okstra_setup
  SETTINGS="$PROJECT/.claude/settings.local.json"
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
  run hooks-install --project "$PROJECT" --sandbox --json
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
  assert_line --index 1 "hook=$REPO_ROOT/hooks/write-guard; [ -x \"\$hook\" ] || exit 0; exec \"\$hook\" # okstra-hook"
  assert_line --index 2 "echo remember the tests"
  assert_line --index 3 "hook=$REPO_ROOT/hooks/compact-reminder; [ -x \"\$hook\" ] || exit 0; exec \"\$hook\" # okstra-hook"
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
  hooks-install --project "$PROJECT" --sandbox >/dev/null 2>&1
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
  # A prefix outside the home folder is named as it is: not user-specific.
  [ "$command" = "hook=$BATS_TEST_TMPDIR/prefix/hooks/write-guard; [ -x \"\$hook\" ] || exit 0; exec \"\$hook\" # okstra-hook" ]
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

@test "writes the personal settings.local.json by default, keeps it out of git, and says so" {
  run --separate-stderr hooks-install --project "$PROJECT"
  assert_success
  assert_output "$SETTINGS: okstra hooks installed: PreToolUse[Write|Edit|MultiEdit|NotebookEdit|Bash], SessionStart[compact]"
  [ "$stderr" = "hooks-install: added settings.local.json to $PROJECT/.git/info/exclude: your personal settings stay out of git" ]
  [ ! -e "$PROJECT/.claude/settings.json" ]
  run git -C "$PROJECT" status --porcelain --untracked-files=all
  refute_output --partial ".claude"
}

@test "--shared writes the committed settings.json, and adds no sandbox allowance without --sandbox" {
  run hooks-install --project "$PROJECT" --shared --json
  assert_success
  assert_output --partial '"allowWrite": []'
  [ ! -e "$SETTINGS" ]
  run python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sorted(d), sorted(d["hooks"]))' "$PROJECT/.claude/settings.json"
  assert_output "['hooks'] ['PreToolUse', 'SessionStart']"
}

@test "--sandbox adds the worker CLIs' write allowances and prints them" {
  run hooks-install --project "$PROJECT" --sandbox
  assert_success
  assert_line --index 1 "$SETTINGS: sandbox write allowances (okstra's): ~/.codex, ~/.gemini"
}

@test "the hook line runs okstra's write-guard while it is there and allows silently once it is gone" {
  "$REPO_ROOT/install.sh" --prefix "$HOME/okstra" >/dev/null
  "$HOME/okstra/bin/hooks-install" --project "$PROJECT" >/dev/null 2>&1
  command=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hooks"]["PreToolUse"][0]["hooks"][0]["command"])' "$SETTINGS")
  [ "$command" = "hook=\"\$HOME\"/okstra/hooks/write-guard; [ -x \"\$hook\" ] || exit 0; exec \"\$hook\" # okstra-hook" ]
  render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude >/dev/null 2>&1
  sidecar="$PROJECT/.okstra/runs/feature--demo--r001/reports/user-responses/forged.md"
  input=$(printf '{"cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"%s","content":"x"}}' "$PROJECT" "$sidecar")
  run env CLAUDE_PROJECT_DIR="$PROJECT" sh -c "$command" <<<"$input"
  assert_success
  assert_output --partial '"permissionDecision":"deny"'
  "$REPO_ROOT/install.sh" --prefix "$HOME/okstra" --uninstall --keep-hooks >/dev/null
  run --separate-stderr env CLAUDE_PROJECT_DIR="$PROJECT" sh -c "$command" <<<"$input"
  assert_success
  assert_output ""
  [ -z "$stderr" ]
}

@test "--uninstall --all takes the hooks out of every project of this prefix, and forgets vanished ones" {
  other="$BATS_TEST_TMPDIR/other"
  gone="$BATS_TEST_TMPDIR/gone"
  mkdir -p "$other" "$gone"
  hooks-install --project "$PROJECT" >/dev/null 2>&1
  hooks-install --project "$other" --shared >/dev/null 2>&1
  hooks-install --project "$gone" >/dev/null 2>&1
  rm -rf "$gone"
  run hooks-install --uninstall --all
  assert_success
  assert_line "$SETTINGS: okstra hooks removed the file okstra created"
  assert_line "$other/.claude/settings.json: okstra hooks removed the file okstra created"
  assert_line "$gone: the project is gone (forgotten)"
  [ ! -e "$OKSTRA_ROOT/hook-projects.json" ]
}
