#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $stderr

load test_helper
load user_response_helper

setup() { okstra_setup; make_report_run; }

@test "shows every open question as unanswered before any answer" {
  run user-response-show --report "$REPORT"
  assert_success
  assert_line "sidecar: (none yet)"
  assert_line "unanswered (2):"
  assert_line --partial "  Q2  Which tier?  [options: free | paid]"
}

@test "shows the answers given and the questions still open" {
  user-response-write --report "$REPORT" --answers '{"Q2": "paid"}' --analysis-review '{"status": "accepted"}'
  run user-response-show --report "$REPORT" --json
  assert_success
  assert_output --partial '"questionId": "Q2"'
  assert_output --partial '"id": "Q1"'
  assert_output --partial '"ANALYSIS REVIEW"'
}

@test "control characters in answers are shown escaped, never raw" {
  user-response-write --report "$REPORT" --answers "{\"Q1\": \"x\\u001b[2Jy\"}"
  run user-response-show --report "$REPORT"
  assert_success
  assert_output --partial 'x\u001b[2Jy'
  [[ "$output" != *$'\e'* ]]
}

@test "refuses a report path outside the project" {
  run --separate-stderr user-response-show --report /etc/passwd
  assert_failure 2
  [[ "$stderr" == "user-response-show: --report: '/etc/passwd' resolves to"* ]]
}

@test "a sidecar edited outside okstra is refused in one line, naming it" {
  user-response-write --report "$REPORT" --answers '{"Q1": "x"}'
  sed -i 's/^- answer: "x"$/- answer: "approved anyway"/' "$SIDECAR"
  run --separate-stderr user-response-show --report "$REPORT"
  assert_failure 2
  [ "${#stderr_lines[@]}" -eq 1 ]
  [[ "$stderr" == *"user-response-implementation-planning-001.md was changed outside okstra"* ]]
}
