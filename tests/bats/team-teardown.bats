#!/usr/bin/env bats

# shellcheck disable=SC2154,SC2016  # bats sets $stderr; single quotes keep hostile text literal
load test_helper
load team_helper

setup() { team_setup; }
teardown() { team_teardown; }

@test "closes every pane, writes off the running worker and leaves no process" {
  prepare_run tmux-pane claude,codex,antigravity,grok
  OKSTRA_FAKE_MODE_GROK=hang team-dispatch 2>/dev/null
  wait_status grok in-progress
  wait_status claude completed
  run --separate-stderr team-teardown --grace 3 --json
  assert_success
  assert_output --partial '"panes": 4'
  assert_output --partial '"writtenOff": ['
  [ "$(panes | wc -l)" -eq 1 ]
  [ "$(status_of grok)" = "error" ]
  [ "$(field_of grok reason)" = "torn down before reaching a terminal status" ]
  [ "$(tmux -S "$OKSTRA_TMUX_SOCKET" display-message -p -t "$LEAD" '#{pane_width}')" = "240" ]
  [ -z "$(worker_pids)" ]
}

@test "a pane closed by hand records error with the signal" {
  prepare_run tmux-pane grok
  OKSTRA_FAKE_MODE_GROK=hang team-dispatch 2>/dev/null
  wait_status grok in-progress
  tmux -S "$OKSTRA_TMUX_SOCKET" kill-pane -t "$(field_of grok paneId)"
  wait_status grok error
  [ "$(field_of grok reason)" = "terminated by SIGHUP" ]
}

@test "--dry-run prints the panes it would close and changes nothing" {
  prepare_run tmux-pane claude,grok
  OKSTRA_FAKE_MODE_GROK=hang team-dispatch 2>/dev/null
  wait_status grok in-progress
  wait_status claude completed
  before=$(panes | cut -d' ' -f1)
  state=$(cat "$RUN_DIR/team-state.json")
  run --separate-stderr team-teardown --dry-run
  assert_success
  assert_line "$(field_of grok paneId)	worker"
  assert_line "$(field_of claude paneId)	worker"
  [ "$(panes | cut -d' ' -f1)" = "$before" ]
  [ "$(status_of grok)" = "in-progress" ]
  team-teardown --grace 3 >/dev/null 2>&1
  [ "$state" != "$(cat "$RUN_DIR/team-state.json")" ]
}

@test "a bad pane id in the team state exits 2 with one line and closes nothing" {
  prepare_run tmux-pane claude
  team-dispatch 2>/dev/null
  wait_status claude completed
  edit_team_state "$RUN_DIR/team-state.json" 'd["workerDispatches"][0]["paneId"] = "$(touch pwned)"'
  before=$(panes | cut -d' ' -f1)
  run --separate-stderr team-teardown
  assert_failure 2
  [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
  [[ "$stderr" == *"is not a tmux-pane pane id"* ]]
  [ "$(panes | cut -d' ' -f1)" = "$before" ]
  [ ! -e pwned ]
}

@test "a cli-wrapper run: stops the hanging process, count 0" {
  prepare_run cli-wrapper claude,grok
  OKSTRA_FAKE_MODE_GROK=hang team-dispatch 2>/dev/null
  wait_status grok in-progress
  pid=$(field_of grok pid)
  run --separate-stderr team-teardown --grace 3 --json
  assert_success
  assert_output --partial '"panes": 0'
  [ ! -d "/proc/$pid" ] || grep -q ' Z ' "/proc/$pid/stat"
  [ -z "$(worker_pids)" ]
}

@test "refuses a bad --grace with exit 2" {
  run --separate-stderr team-teardown --grace soon
  assert_failure 2
  [[ "$stderr" == "team-teardown: argument --grace: 'soon' is not a number of seconds from 0 up to 600; see 'team-teardown --help'" ]]
}

@test "prints the phase-teardown checkpoint" {
  render-bundle --brief "a test task" --task-key demo/end --task-type analysis --workers claude --backend cli-wrapper >/dev/null
  run --separate-stderr team-teardown
  assert_success
  [[ "$stderr" == "team-teardown: PROGRESS: phase-teardown panes=0 "* ]]
}

@test "ends the run: the stage's write rules end at once and the reminder says no active run (issue 11 #2)" {
  load run_helper
  prepare_run cli-wrapper claude
  team-dispatch 2>/dev/null
  wait_status claude completed
  stage_scope "src/**"
  [[ "$(guard_edit README.md)" == *'"permissionDecision":"deny"'* ]]
  run --separate-stderr team-teardown --json
  assert_success
  assert_output --partial '"runEnded": true'
  [[ "$stderr" == *"run feature--demo--r001 ended"* ]]
  [ ! -e "$PROJECT/.okstra/active-run.json" ]
  [ -z "$(guard_edit README.md)" ]
  [[ "$(reminder)" == "okstra: no active run"* ]]
  grep -q '"phase": "ended"' "$M"
}

@test "prints the checkpoint alone on a line of its own" {
  prepare_run cli-wrapper claude
  run --separate-stderr team-teardown
  assert_success
  [[ "$stderr" == *$'\n'"PROGRESS: phase-teardown panes=0"* ]]
}
