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

wait_for_child() { # <worker>: print the provider's pid once worker-run started it
  local child=""
  for _ in $(seq 100); do
    child=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("childPid") or "")' "$RUN_DIR/logs/$1.heartbeat" 2>/dev/null || true)
    [ -n "$child" ] && { echo "$child"; return 0; }
    sleep 0.1
  done
  return 1
}

@test "a running worker is healthy and a SIGKILLed one is unhealthy" {
  OKSTRA_FAKE_MODE=hang worker-run --run-manifest "$M" --worker claude >/dev/null 2>&1 &
  local pid=$!
  child=$(wait_for_child claude)
  run worker-probe --worker claude --json
  assert_success
  assert_output --partial '"healthy": true'
  kill -KILL "$pid"
  wait "$pid" || true
  run worker-probe --worker claude --max-idle 5 --json
  kill -KILL -- "-$child" 2>/dev/null || true
  assert_failure 1
  assert_output --partial '"healthy": false'
  assert_output --partial "gone without a terminal status"
}

@test "by default probes every worker of the active run, finished ones included" {
  worker-run --run-manifest "$M" --worker codex >/dev/null 2>&1
  run worker-probe
  assert_success
  assert_line "claude attempt 1: healthy: pending, not dispatched yet"
  assert_line "codex attempt 1: healthy: completed"
}

@test "a crashed worker makes the default probe unhealthy, exit 1 (issue 11 #4)" {
  OKSTRA_FAKE_MODE=crash worker-run --run-manifest "$M" --worker codex >/dev/null 2>&1 || true
  run worker-probe
  assert_failure 1
  assert_line --partial "codex attempt 1: UNHEALTHY: ended error: provider exited 3"
}

@test "--wait is worker-wait: it refuses a dispatch never launched and waits for the rest" {
  run --separate-stderr worker-probe --wait --timeout 5
  assert_failure 2
  [[ "$stderr" == *"never dispatched"*"run team-dispatch"* ]]
  worker-run --run-manifest "$M" --worker claude >/dev/null 2>&1
  worker-run --run-manifest "$M" --worker codex >/dev/null 2>&1
  run worker-probe --wait --timeout 30 --interval 5
  assert_success
  assert_line --partial "all done after"
}

@test "a failed worker is unhealthy with its recorded reason" {
  OKSTRA_FAKE_MODE=rate-limit worker-run --run-manifest "$M" --worker claude >/dev/null 2>&1 || true
  run worker-probe --worker claude
  assert_failure 1
  assert_output --partial "claude attempt 1: UNHEALTHY: ended error: rate-limited: API Error: Request rejected (429)"
}

@test "an unknown worker or a bad number exits 2 with one line" {
  run --separate-stderr worker-probe --worker nobody
  assert_failure 2
  [[ "$stderr" == "worker-probe: no dispatch for worker 'nobody'"* ]]
  run --separate-stderr worker-probe --max-idle -3
  assert_failure 2
  [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
}

@test "with no active run it says so and exits 2" {
  rm -f "$PROJECT/.okstra/active-run.json" "$PROJECT/.okstra/active-run.seal"
  run --separate-stderr worker-probe
  assert_failure 2
  [[ "$stderr" == "worker-probe: no active run in "* ]]
}
