#!/usr/bin/env bats

# shellcheck disable=SC2154  # bats sets $stderr
load test_helper
load team_helper

setup() { team_setup; }
teardown() { team_teardown; }

@test "prints the team table with the evidence behind each status" {
  prepare_run cli-wrapper claude,codex
  team-dispatch 2>/dev/null
  wait_status claude completed
  wait_status codex completed
  run --separate-stderr team-status
  assert_success
  assert_line --index 0 --regexp '^WORKER +ROLE +PROVIDER/MODEL +STATUS +ATTEMPT +AGE +TOKENS +EVIDENCE$'
  assert_line --regexp '^claude +analyst +claude/[^ ]+ +completed +1 +[0-9]+s +[0-9]+ in / [0-9]+ out.* +completed$'
}

@test "--explain shows the evidence for one worker" {
  prepare_run cli-wrapper claude
  team-dispatch 2>/dev/null
  wait_status claude completed
  run --separate-stderr team-status --explain claude
  assert_success
  assert_line --regexp '^startedAt +20[0-9-]+T'
  assert_line --regexp '^pid +[0-9]+ \(not running'
  assert_line --regexp '^exit code +0$'
  assert_line --regexp '^result +\.okstra/runs/feature--demo--r001/results/claude\.md: [0-9]+ bytes'
}

@test "--json gives one document" {
  prepare_run cli-wrapper claude
  run --separate-stderr team-status --json
  assert_success
  echo "$output" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["workers"][0]["status"] == "pending"'
}

@test "an unknown worker exits 2 with one line" {
  prepare_run cli-wrapper claude
  run --separate-stderr team-status --explain nobody
  assert_failure 2
  [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
}
