#!/usr/bin/env bats

# shellcheck disable=SC2154,SC2016  # bats sets $stderr; single quotes keep hostile text literal
load test_helper
load team_helper

setup() { team_setup; }
teardown() { team_teardown; }

@test "dispatches four workers into panes beside the lead and returns at once" {
  prepare_run tmux-pane claude,codex,antigravity,grok
  OKSTRA_FAKE_MODE_GROK=hang run --separate-stderr team-dispatch --json
  assert_success
  assert_output --partial '"panes": 4'
  [[ "$stderr" == *"PROGRESS: phase-dispatch workers=4 panes=4 backend=tmux-pane"* ]]
  [ "$(panes | wc -l)" -eq 5 ]
  wait_status claude completed
  [ "$(field_of claude paneId)" != "None" ]
  team-teardown --grace 3 >/dev/null 2>&1
}

@test "refuses the whole round when one prompt fails the contract" {
  prepare_run tmux-pane claude,codex
  sed -i 's/\*\*Task Type:\*\*/**Kind:**/' "$RUN_DIR/prompts/codex.md"
  before=$(tree_snapshot "$PROJECT/.okstra")
  run --separate-stderr team-dispatch
  assert_failure 1
  [[ "$stderr" == *"team-dispatch: codex attempt 1: "* ]]
  [ "$(tree_snapshot "$PROJECT/.okstra")" = "$before" ]
  [ "$(panes | wc -l)" -eq 1 ]
}

@test "re-dispatches a finished worker as a new attempt with fresh paths" {
  prepare_run cli-wrapper claude
  OKSTRA_FAKE_MODE=crash team-dispatch 2>/dev/null
  wait_status claude error
  run --separate-stderr team-dispatch --redispatch claude --json
  assert_success
  assert_output --partial '"attempt": 2'
  wait_status claude completed
  [ "$(field_of claude resultPath)" = ".okstra/runs/feature--demo--r001/results/claude.attempt-2.md" ]
  [ -f "$RUN_DIR/prompts/claude.attempt-2.md" ]
}

@test "a bad pane id in the team state exits 2 with one line and starts nothing" {
  prepare_run tmux-pane claude,codex
  edit_team_state "$RUN_DIR/team-state.json" 'd["workerDispatches"][0]["paneId"] = "%1; kill-server"'
  before=$(tree_snapshot "$PROJECT/.okstra")
  run --separate-stderr team-dispatch
  assert_failure 2
  [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
  [[ "$stderr" == *"is not a tmux-pane pane id"* ]]
  [ "$(tree_snapshot "$PROJECT/.okstra")" = "$before" ]
}

@test "a team state changed outside okstra is refused by team-status, worker-run, team-dispatch and worker-wait: one line, exit 2, nothing changed" {
  prepare_run tmux-pane claude,codex
  python3 -c 'import json,sys; p=sys.argv[1]; d=json.load(open(p)); d["workerDispatches"][0]["status"]="completed"; json.dump(d, open(p,"w"))' "$RUN_DIR/team-state.json"
  before=$(tree_snapshot "$PROJECT/.okstra")
  for cmd in team-status "worker-run --run-manifest $RUN_DIR/run-manifest.json --worker claude" team-dispatch "worker-wait --timeout 1"; do
    # shellcheck disable=SC2086  # the command and its arguments, split on purpose
    run --separate-stderr $cmd
    assert_failure 2
    [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
    [[ "$stderr" == *"team-state.json was changed outside okstra"*"render-bundle"* ]]
    [ "$(tree_snapshot "$PROJECT/.okstra")" = "$before" ]
  done
}

@test "with no active run it says so and exits 2" {
  run --separate-stderr team-dispatch
  assert_failure 2
  [[ "$stderr" == "team-dispatch: no active run in "* ]]
}
