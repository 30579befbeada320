#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $stderr

load test_helper
load user_response_helper

setup() { okstra_setup; make_report_run; }

@test "lists no sidecars for a fresh run" {
  run user-response-list
  assert_success
  assert_line "run: $RUN_ID"
  assert_line "  no sidecars yet"
}

@test "lists each sidecar with the blocks it holds" {
  user-response-write --report "$REPORT" --answers '{"Q1": "x"}' --plan-decision '{"status": "rejected", "reason": "too big"}'
  run user-response-list --run-manifest "$MANIFEST"
  assert_success
  assert_line "  $SIDECAR  answers: Q1  blocks: ANSWERS, PLAN DECISION"
  run user-response-list --json
  assert_output --partial '"status": "rejected"'
}

@test "without an active run it asks for a manifest" {
  rm -f .okstra/active-run.json .okstra/active-run.seal
  run --separate-stderr user-response-list
  assert_failure 2
  [[ "$stderr" == "user-response-list: no active run in "*" (.okstra/active-run.json); pass --run-manifest "* ]]
}

@test "refuses a manifest outside the project" {
  run --separate-stderr user-response-list --run-manifest /etc/hostname
  assert_failure 2
  [[ "$stderr" == *"outside the project"* ]]
}

@test "a sidecar written outside okstra exits 2 naming it" {
  mkdir -p "$(dirname "$SIDECAR")"
  printf '# nope\n' > "$SIDECAR"
  run --separate-stderr user-response-list
  assert_failure 2
  [[ "$stderr" == *"user-response-implementation-planning-001.md has no okstra seal: it was written outside okstra"* ]]
}
