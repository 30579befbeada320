#!/usr/bin/env bats

# shellcheck disable=SC2154,SC2016  # bats sets $stderr; single quotes keep hostile text literal
load test_helper

setup() {
  okstra_setup
  export PATH="$REPO_ROOT/tests/fakes:$PATH"
  RUN_DIR="$PROJECT/.okstra/runs/feature--demo--r001"
  M="$RUN_DIR/run-manifest.json"
  render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude,codex >/dev/null
}

set_field() { # <worker> <field> <json value>
  W=$1 F=$2 V=$3 edit_team_state "$RUN_DIR/team-state.json" "import json, os
for x in d['workerDispatches']:
    if x['workerId'] == os.environ['W']: x[os.environ['F']] = json.loads(os.environ['V'])"
}

@test "exits 0 once every worker's recorded result is complete" {
  now="\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\""
  set_field claude dispatchedAt "$now"  # as team-dispatch records it before worker-run starts
  set_field codex dispatchedAt "$now"
  OKSTRA_FAKE_MODE=slow OKSTRA_FAKE_DELAY=1 worker-run --run-manifest "$M" --worker claude >/dev/null 2>&1 &
  OKSTRA_FAKE_MODE=slow OKSTRA_FAKE_DELAY=1.5 worker-run --run-manifest "$M" --worker codex >/dev/null 2>&1 &
  run --separate-stderr worker-wait --timeout 30 --json
  wait
  assert_success
  assert_output --partial '"done": ['
  assert_output --partial '"unhealthy": []'
  assert_output --partial '"waitedSeconds":'
  [ -z "$stderr" ]  # not a terminal: no progress line
}

@test "a codex that reconnects once and carries on is waited for to the end: exit 0, not retrying" {
  set_field codex dispatchedAt "\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\""
  OKSTRA_FAKE_MODE=reconnect OKSTRA_FAKE_DELAY=3 worker-run --run-manifest "$M" --worker codex >/dev/null 2>&1 &
  run --separate-stderr worker-wait --worker codex --timeout 30 --json
  wait
  assert_success
  assert_output --partial '"unhealthy": []'
  grep -q 'Reconnecting... 1/5' "$RUN_DIR/logs/codex.log"  # the reconnect did happen while it waited
}

@test "exits 1 when a worker fails" {
  OKSTRA_FAKE_MODE=crash worker-run --run-manifest "$M" --worker codex >/dev/null 2>&1 || true
  run worker-wait --timeout 30
  assert_failure 1
  assert_line --partial "unhealthy	codex	ended error: provider exited 3"
}

@test "exits 3 when the timeout passes first, naming who is pending" {
  set_field claude dispatchedAt "\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\""
  run worker-wait --worker claude --timeout 0.3 --json
  assert_failure 3
  assert_output --partial '"timedOut": true'
  assert_output --partial '"pending": ['
}

@test "refuses a dispatch with no recorded result path" {
  set_field codex resultPath null
  run --separate-stderr worker-wait --timeout 5
  assert_failure 2
  [ "$stderr" = "worker-wait: dispatch 'codex' attempt 1 has no recorded resultPath; worker-wait never guesses a result file; re-dispatch it so the record names one" ]
}

@test "refuses a recorded result path outside the project" {
  set_field codex resultPath '"/tmp/elsewhere.md"'
  run --separate-stderr worker-wait --timeout 5
  assert_failure 2
  [[ "$stderr" == *"outside the project"* ]]
}

@test "a dispatch never launched is refused at once: run team-dispatch (issue 11 #4)" {
  # Refused, not waited for: a wait would be cut by timeout (exit 124), not exit 2.
  run --separate-stderr timeout 60 worker-wait --timeout 1800
  assert_failure 2
  [[ "$stderr" == "worker-wait: nothing to wait for: claude, codex never dispatched (pending, not launched); run team-dispatch"* ]]
}

@test "accepts --interval for compatibility" {
  OKSTRA_FAKE_MODE=crash worker-run --run-manifest "$M" --worker codex >/dev/null 2>&1 || true
  run worker-wait --interval 20 --timeout 30
  assert_failure 1
  assert_line --partial "unhealthy	codex"
}
