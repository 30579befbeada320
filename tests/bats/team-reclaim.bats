#!/usr/bin/env bats

# shellcheck disable=SC2154  # bats sets $stderr
load test_helper
load team_helper

setup() { team_setup; }
teardown() { team_teardown; }

@test "closes finished workers' panes and keeps the running one's" {
  prepare_run tmux-pane claude,grok
  OKSTRA_FAKE_MODE_GROK=hang team-dispatch 2>/dev/null
  wait_status claude completed
  wait_status grok in-progress
  grok_pane=$(field_of grok paneId)
  claude_pane=$(field_of claude paneId)
  run --separate-stderr team-reclaim
  assert_success
  assert_output "$claude_pane	worker	claude"
  [[ "$stderr" == *"PROGRESS: phase-batch-cleanup panes=1"* ]]
  run panes
  assert_output --partial "$grok_pane 0"
  refute_output --partial "$claude_pane "
  team-teardown --grace 3 >/dev/null 2>&1
}

@test "--dry-run prints one pane-id and kind line per pane and closes nothing" {
  prepare_run tmux-pane claude,codex
  team-dispatch 2>/dev/null
  wait_status claude completed
  wait_status codex completed
  # Pane ids only: a pane's dead flag may still flip once worker-run exits after recording.
  before=$(panes | cut -d' ' -f1)
  run --separate-stderr team-reclaim --dry-run
  assert_success
  assert_line "$(field_of claude paneId)	worker"
  assert_line "$(field_of codex paneId)	worker"
  [ "${#lines[@]}" -eq 2 ]
  [ "$(panes | cut -d' ' -f1)" = "$before" ]
}

@test "a user's own pane with the same title survives" {
  prepare_run tmux-pane claude
  team-dispatch 2>/dev/null
  wait_status claude completed
  title=$(tmux -S "$OKSTRA_TMUX_SOCKET" display-message -p -t "$(field_of claude paneId)" '#{pane_title}')
  mine=$(tmux -S "$OKSTRA_TMUX_SOCKET" split-window -d -P -F '#{pane_id}' -t "$LEAD" 'sleep 60')
  tmux -S "$OKSTRA_TMUX_SOCKET" select-pane -t "$mine" -T "$title"
  run team-reclaim
  assert_success
  run panes
  assert_output --partial "$mine 0 $title"
}

@test "a cli-wrapper run has no panes: the count is 0" {
  prepare_run cli-wrapper claude
  team-dispatch 2>/dev/null
  wait_status claude completed
  run --separate-stderr team-reclaim --json
  assert_success
  assert_output --partial '"panes": 0'
}

@test "before a user gate it prints the phase-gate-cleanup checkpoint" {
  render-bundle --brief "a test task" --task-key demo/gate --task-type analysis --workers claude --backend cli-wrapper >/dev/null
  run --separate-stderr team-reclaim --gate
  assert_success
  [[ "$stderr" == "team-reclaim: PROGRESS: phase-gate-cleanup panes=0 "* ]]
}

@test "lists and counts the closed panes when the width restore fails, with a warning (issue 11 #7)" {
  prepare_run tmux-pane claude,codex
  team-dispatch 2>/dev/null
  wait_status claude completed
  wait_status codex completed
  # A lead width tmux refuses (`resize-pane`: width too large) after the panes are closed.
  tmux -S "$OKSTRA_TMUX_SOCKET" set-option -p -t "$LEAD" @okstra-lead-width 99999999999
  run --separate-stderr team-reclaim --json
  assert_success
  assert_output --partial '"panes": 2'
  assert_output --partial '"workerId": "claude"'
  assert_output --partial '"workerId": "codex"'
  [[ "$stderr" == *"team-reclaim: warning: the lead pane's width was not restored"*"too large"* ]]
  [[ "$stderr" == *$'\n'"PROGRESS: phase-batch-cleanup panes=2"* ]]
  [ "$(panes | wc -l)" -eq 1 ]
}

@test "records the phase in the active run: round boundary, then the user gate" {
  prepare_run cli-wrapper claude
  team-reclaim 2>/dev/null
  grep -q '"phase": "round-boundary"' "$PROJECT/.okstra/active-run.json"
  team-reclaim --gate 2>/dev/null
  grep -q '"phase": "user-gate"' "$PROJECT/.okstra/active-run.json"
}

@test "workers and a watcher never squeeze the lead below 100 columns, the lead gets its width back, the user's pane is untouched" {
  tmx() { tmux -S "$OKSTRA_TMUX_SOCKET" "$@"; }
  user=$(tmx split-window -d -v -l 10 -P -F '#{pane_id}' -t "$LEAD" 'sleep 120')
  user_before=$(tmx display-message -p -t "$user" '#{pane_width}x#{pane_height} #{window_id}')
  lead_before=$(tmx display-message -p -t "$LEAD" '#{pane_width}')
  prepare_run tmux-pane claude,codex,antigravity,grok,kimi
  OKSTRA_FAKE_MODE_GROK=hang team-dispatch >/dev/null 2>&1
  widths=("$(tmx display-message -p -t "$LEAD" '#{pane_width}')")
  team-watch >/dev/null
  widths+=("$(tmx display-message -p -t "$LEAD" '#{pane_width}')")
  for w in "${widths[@]}"; do [ "$w" -ge 100 ]; done
  # The watcher opened in okstra's own window, whose borders show okstra's titles.
  watcher_window=$(tmx list-panes -a -f '#{==:#{@okstra-kind},watcher}' -F '#{window_id}')
  [ "$watcher_window" != "$(tmx display-message -p -t "$LEAD" '#{window_id}')" ]
  [ "$(tmx show-options -wqv -t "$watcher_window" pane-border-status)" = top ]
  [ -z "$(tmx show-options -wqv -t "$LEAD" pane-border-status)" ]
  wait_status claude completed
  team-reclaim >/dev/null 2>&1
  team-teardown --grace 3 >/dev/null 2>&1
  [ "$(tmx display-message -p -t "$LEAD" '#{pane_width}')" = "$lead_before" ]
  [ "$(tmx display-message -p -t "$user" '#{pane_width}x#{pane_height} #{window_id}')" = "$user_before" ]
  team-watch --stop --run-manifest "$M" >/dev/null
  [ -z "$(tmx list-panes -a -f '#{@okstra-run}' -F '#{pane_id}')" ]
}
