#!/usr/bin/env bats

# shellcheck disable=SC2154  # bats sets $stderr
load test_helper
load team_helper
load run_helper

setup() { team_setup; }
teardown() { team_teardown; }

@test "ends an abandoned run: tears down, records abandoned, clears the active run (issue 11 #2)" {
  prepare_run tmux-pane claude,grok
  OKSTRA_FAKE_MODE_GROK=hang team-dispatch 2>/dev/null
  wait_status grok in-progress
  stage_scope "src/**"
  run --separate-stderr run-end --grace 3 --json
  assert_success
  assert_output --partial '"finalStatus": "abandoned"'
  assert_output --partial '"runEnded": true'
  [ "$(status_of grok)" = "error" ]
  [ "$(panes | wc -l)" -eq 1 ]
  [ -z "$(worker_pids)" ]
  [ ! -e "$PROJECT/.okstra/active-run.json" ]
  grep -q '"finalStatus": "abandoned"' "$M"
  [ -z "$(guard_edit README.md)" ]
  [[ "$(reminder)" == "okstra: no active run"* ]]
}

@test "okstra run end is the same command" {
  prepare_run cli-wrapper claude
  run --separate-stderr okstra run end
  assert_success
  [[ "$stderr" == *$'\n'"PROGRESS: phase-run-end panes=0"* ]]
  [ ! -e "$PROJECT/.okstra/active-run.json" ]
}

@test "with no active run it says so and exits 2, changing nothing" {
  before=$(tree_snapshot "$PROJECT")
  run --separate-stderr run-end
  assert_failure 2
  [[ "$stderr" == "run-end: no active run in "* ]]
  [ "$(tree_snapshot "$PROJECT")" = "$before" ]
}

@test "ending a run that is not the active one leaves the active run alone" {
  prepare_run cli-wrapper claude
  render-bundle --brief "a test task" --task-key other/task --task-type analysis --workers claude --backend cli-wrapper --replace-active >/dev/null 2>&1
  run --separate-stderr run-end --run-manifest "$M"
  assert_success
  grep -q '"runId": "other--task--r001"' "$PROJECT/.okstra/active-run.json"
  grep -q '"finalStatus": "abandoned"' "$M"
}
