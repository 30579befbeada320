#!/usr/bin/env bats

load test_helper

setup() {
  okstra_setup
  export PATH="$REPO_ROOT/tests/fakes:$PATH"
}

@test "a cli-wrapper run has no panes: it says where the logs are, exit 2, nothing written" {
  render-bundle --brief "a test task" --task-key demo/watch --task-type analysis --workers claude --backend cli-wrapper >/dev/null
  before=$(tree_snapshot .okstra)
  run --separate-stderr team-watch
  assert_failure 2
  [[ "$stderr" == "team-watch: run demo--watch--r001 uses the cli-wrapper backend, which has no panes to watch in; follow the logs yourself: tail -F .okstra/runs/demo--watch--r001/logs/*.log" ]]
  [ "$(tree_snapshot .okstra)" = "$before" ]
}

@test "stop with no watchers closes nothing and succeeds" {
  render-bundle --brief "a test task" --task-key demo/watch --task-type analysis --workers claude --backend cli-wrapper >/dev/null
  run team-watch --stop --json
  assert_success
  assert_line --partial '"closed": []'
}

@test "an unknown worker is refused with the known ones" {
  export OKSTRA_TMUX_SOCKET="$BATS_TEST_TMPDIR/tmux.sock"
  tmux -S "$OKSTRA_TMUX_SOCKET" -f /dev/null new-session -d -s lead
  lead=$(tmux -S "$OKSTRA_TMUX_SOCKET" display-message -p -t lead: '#{pane_id}')
  render-bundle --brief "a test task" --task-key demo/watch --task-type analysis --workers claude --backend tmux-pane --lead-pane "$lead" >/dev/null
  run --separate-stderr team-watch --worker nobody
  tmux -S "$OKSTRA_TMUX_SOCKET" kill-server
  assert_failure 2
  [[ "$stderr" == *"no dispatch for worker 'nobody'"*"known workers: claude"* ]]
}

@test "the feed is one readable line per provider event with the tokens so far, no raw JSON" {
  render-bundle --brief "a test task" --task-key demo/watch --task-type analysis --workers claude,codex --backend cli-wrapper >/dev/null 2>&1
  team-dispatch >/dev/null 2>&1
  worker-wait --timeout 60 >/dev/null 2>&1
  run --separate-stderr team-watch --feed --once
  assert_success
  assert_line --regexp '^[0-9]{2}:[0-9]{2}:[0-9]{2}  claude          result   # Findings \(analysis\).*\(tokens [0-9,]+\)$'
  assert_line --regexp '^[0-9]{2}:[0-9]{2}:[0-9]{2}  codex           start    thread\.started  \(tokens -\)$'
  assert_line --regexp '^[0-9]{2}:[0-9]{2}:[0-9]{2}  codex           result   turn completed  \(tokens [0-9,]+\)$'
  refute_output --partial '{"type"'
  run --separate-stderr team-watch --feed --once --worker codex
  refute_output --partial "  claude  "
}
