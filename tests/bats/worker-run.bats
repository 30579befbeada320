#!/usr/bin/env bats

# shellcheck disable=SC2154,SC2016  # bats sets $stderr; single quotes keep hostile text literal
load test_helper

setup() {
  okstra_setup
  export PATH="$REPO_ROOT/tests/fakes:$PATH"
  RUN_DIR="$PROJECT/.okstra/runs/feature--demo--r001"
  M="$RUN_DIR/run-manifest.json"
}

prepare() { # <workers>
  render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers "$1" >/dev/null
}

field() { # <worker> <field>
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([x for x in d["workerDispatches"] if x["workerId"]==sys.argv[2]][-1][sys.argv[3]])' \
    "$RUN_DIR/team-state.json" "$1" "$2"
}

set_field() { # <worker> <field> <json value>
  W=$1 F=$2 V=$3 edit_team_state "$RUN_DIR/team-state.json" "import json, os
for x in d['workerDispatches']:
    if x['workerId'] == os.environ['W']: x[os.environ['F']] = json.loads(os.environ['V'])"
}

@test "a fake worker completes: result written, usage and status recorded" {
  prepare claude
  run worker-run --run-manifest "$M" --worker claude
  assert_success
  assert_output --partial "completed -> .okstra/runs/feature--demo--r001/results/claude.md"
  [ "$(field claude status)" = completed ]
  [ "$(field claude exitCode)" = 0 ]
  grep -q "Findings (analysis)" "$RUN_DIR/results/claude.md"
  field claude usage | grep -q "'inputTokens': [1-9]"
  [ -f "$RUN_DIR/logs/claude.heartbeat" ]
}

@test "a crashing provider is recorded as error with its exit code and last stderr line" {
  prepare codex
  OKSTRA_FAKE_MODE=crash run worker-run --run-manifest "$M" --worker codex
  assert_failure 1
  [ "$(field codex status)" = error ]
  [ "$(field codex reason)" = "provider exited 3: Error: fake codex crashed on purpose (OKSTRA_FAKE_MODE=crash)" ]
  [ ! -e "$RUN_DIR/results/codex.md" ]
}

@test "a usage limit is recorded as rate-limited" {
  prepare codex
  OKSTRA_FAKE_MODE_CODEX=rate-limit run worker-run --run-manifest "$M" --worker codex
  assert_failure 1
  [[ "$(field codex reason)" == "rate-limited: You"*"usage limit"* ]]
}

@test "SIGTERM kills the provider's process group and records the signal" {
  prepare claude
  OKSTRA_FAKE_MODE=hang worker-run --run-manifest "$M" --worker claude >/dev/null 2>&1 &
  local pid=$! child=""
  for _ in $(seq 100); do
    child=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("childPid") or "")' "$RUN_DIR/logs/claude.heartbeat" 2>/dev/null || true)
    [ -n "$child" ] && break
    sleep 0.1
  done
  [ -n "$child" ]
  kill -TERM "$pid"
  local rc=0
  wait "$pid" || rc=$?
  [ "$rc" -eq 143 ]
  [ "$(field claude status)" = error ]
  [ "$(field claude reason)" = "terminated by SIGTERM" ]
  run ps -o pid= -g "$child"
  [ -z "$output" ]
}

@test "refuses a dispatch that is already terminal and changes nothing" {
  prepare claude
  worker-run --run-manifest "$M" --worker claude >/dev/null 2>&1
  before=$(tree_snapshot "$PROJECT/.okstra")
  run --separate-stderr worker-run --run-manifest "$M" --worker claude
  assert_failure 2
  [ "$stderr" = "worker-run: dispatch 'claude' attempt 1 is already completed; dispatch a new attempt to run it again" ]
  [ "$(tree_snapshot "$PROJECT/.okstra")" = "$before" ]
}

@test "refuses a result path outside the project" {
  prepare claude
  set_field claude resultPath '"../escape; $(touch pwned).md"'
  before=$(tree_snapshot "$PROJECT/.okstra")
  run --separate-stderr worker-run --run-manifest "$M" --worker claude
  assert_failure 2
  [[ "$stderr" == *"outside the project"* ]]
  [ "$(tree_snapshot "$PROJECT/.okstra")" = "$before" ]
  [ ! -e "$BATS_TEST_TMPDIR/escape; \$(touch pwned).md" ]
  [ ! -e pwned ]
}

@test "refuses a manifest that is not inside a run folder" {
  echo '{}' > "$PROJECT/run-manifest.json"
  run --separate-stderr worker-run --run-manifest "$PROJECT/run-manifest.json" --worker claude
  assert_failure 2
  [[ "$stderr" == "worker-run: --run-manifest: "*"is not a run manifest"* ]]
}

@test "a result the worker wrote itself is kept; its final message goes to the answer file" {
  prepare claude
  OKSTRA_FAKE_MODE=write-result run worker-run --run-manifest "$M" --worker claude
  assert_success
  assert_output --partial "(written by the worker)"
  grep -q "Findings (analysis)" "$RUN_DIR/results/claude.md"
  run grep -c "I wrote my result" "$RUN_DIR/results/claude.md"
  [ "$output" = 0 ]
  grep -q "I wrote my result to" "$PROJECT/$(field claude answerPath)"
}

@test "the model that served is recorded beside the asked one" {
  render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers antigravity >/dev/null
  run worker-run --run-manifest "$M" --worker antigravity
  assert_success
  [ "$(field antigravity modelId)" = gemini-3-pro ]
  [ "$(field antigravity servedModel)" = gemini-3.1-pro-preview ]
}
