#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $stderr

load test_helper
load user_response_helper

setup() { okstra_setup; make_report_run; }

write_plan() { # rows...
  { printf '# Plan\n\n## Stage Map\n\n| Stage | Title | Depends On | Steps | Exit Contract |\n|---|---|---|---|---|\n'
    printf '%s\n' "$@"; } > plan.md
}

@test "prints the stages and their order from the data file beside the plan" {
  run stage-map "$REPORT"
  assert_success
  assert_line "  3. Metrics and operator docs  (depends on: 1, 2; steps: 2)"
  assert_line "order: 1 -> 2 -> 3"
}

@test "with --next reads the consumer log and names the next stage" {
  stage-record --task-key feature/rate-limit --stage 1 --status "done" --head-commit abcdef0
  run stage-map "$REPORT" --next
  assert_success
  assert_line "next: stage 2 (Middleware wiring and per-route config)"
}

@test "a failed stage stops the queue and says so" {
  stage-record --task-key feature/rate-limit --stage 1 --status failed
  run stage-map "$REPORT" --next --json
  assert_success
  assert_output --partial '"state": "stopped"'
  run stage-map "$REPORT" --next
  assert_line --partial "next: none, the queue is stopped: stage 1 failed"
}

@test "reads a Markdown table with escaped pipes" {
  write_plan '| 1 | Parse a \| b | none | 2 | ok |' '| 2 | Emit | 1 | 1 | ok |'
  run stage-map plan.md --json
  assert_success
  assert_output --partial '"title": "Parse a | b"'
}

@test "reports every problem of a bad table with file, row and field, exit 1" {
  write_plan '| 1 | A | none | 1 | a |' '| 2 |  | 3 | x | b |' '| 4 | C | 1 | 1 | c | d |'
  run --separate-stderr stage-map plan.md
  assert_failure 1
  [[ "$stderr" == *"stage-map: plan.md:8: row 2: title: must be non-empty text"* ]]
  [[ "$stderr" == *"stage-map: plan.md:8: row 2: stepCount: 'x' is not a positive whole number"* ]]
  [[ "$stderr" == *"stage-map: plan.md:8: row 2: dependsOn: stage 3 is not an earlier stage"* ]]
  [[ "$stderr" == *"stage-map: plan.md:9: row 3: expected 5 cells, found 6"* ]]
}

@test "refuses unreadable plans and paths outside the project with exit 2" {
  printf '{nope' > plan.data.json
  printf '# Plan\n' > plan.md
  run --separate-stderr stage-map plan.md
  assert_failure 2
  [[ "$stderr" == *"not valid JSON at line 1"* ]]
  run --separate-stderr stage-map /etc/passwd
  assert_failure 2
  [[ "$stderr" == *"outside the project"* ]]
  run --separate-stderr stage-map missing.md
  assert_failure 2
}
