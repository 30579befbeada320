# Shared set-up for the team-* bats files: a private tmux server per test
# (OKSTRA_TMUX_SOCKET, a fixed size, no terminal), the fake provider CLIs on
# PATH, and a teardown that kills the server and fails the test when any
# process naming the test's folders is still running.

team_setup() {
  okstra_setup
  export PATH="$REPO_ROOT/tests/fakes:$PATH"
  TMUX_DIR=$(mktemp -d /tmp/okb-XXXXXX)
  export OKSTRA_TMUX_SOCKET="$TMUX_DIR/sock"
  tmux -S "$OKSTRA_TMUX_SOCKET" -f /dev/null new-session -d -x 240 -y 60 -s lead
  LEAD=$(tmux -S "$OKSTRA_TMUX_SOCKET" display-message -p -t lead: '#{pane_id}')
  export LEAD
  RUN_DIR="$PROJECT/.okstra/runs/feature--demo--r001"
  export M="$RUN_DIR/run-manifest.json"
}

team_teardown() {
  tmux -S "$OKSTRA_TMUX_SOCKET" kill-server 2>/dev/null || true
  local left=""
  for _ in $(seq 60); do
    left=$(leftover_pids)
    [ -z "$left" ] && break
    sleep 0.05
  done
  rm -rf "$TMUX_DIR"
  if [ -n "$left" ]; then
    # shellcheck disable=SC2086  # a list of pids
    kill -9 $left 2>/dev/null || true
    echo "processes left running: $left" >&2
    return 1
  fi
}

# Processes (not zombies) whose command line names this test's folders, or that run in a pane
# of its tmux server or as a worker of its project (bats' own shells carry the folders in
# their environment, so only these two variables count there).
leftover_pids() {
  python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from fixtures.tmux import leftovers; print(" ".join(map(str, leftovers(sys.argv[2], sys.argv[3], env_markers=sys.argv[4:]))))' \
    "$REPO_ROOT/tests" "$BATS_TEST_TMPDIR" "$TMUX_DIR" "TMUX=$TMUX_DIR/sock," "OKSTRA_PROJECT_ROOT=$PROJECT"
}

# Worker processes of this test's project (worker-run and the provider CLIs it started).
worker_pids() {
  python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from fixtures.tmux import leftovers; print(" ".join(map(str, leftovers(sys.argv[2], env_markers=sys.argv[3:]))))' \
    "$REPO_ROOT/tests" "$PROJECT/.okstra" "OKSTRA_PROJECT_ROOT=$PROJECT"
}

panes() { # every pane: "<id> <dead> <title>"
  tmux -S "$OKSTRA_TMUX_SOCKET" list-panes -a -F '#{pane_id} #{pane_dead} #{pane_title}'
}

status_of() { # <worker>: the newest attempt's status
  python3 -c 'import json,sys; d=[x for x in json.load(open(sys.argv[1]))["workerDispatches"] if x["workerId"]==sys.argv[2]]; print(max(d, key=lambda x: x["attempt"])["status"])' \
    "$RUN_DIR/team-state.json" "$1"
}

field_of() { # <worker> <field>
  python3 -c 'import json,sys; d=[x for x in json.load(open(sys.argv[1]))["workerDispatches"] if x["workerId"]==sys.argv[2]]; print(max(d, key=lambda x: x["attempt"]).get(sys.argv[3]))' \
    "$RUN_DIR/team-state.json" "$1" "$2"
}

wait_status() { # <worker> <status> [seconds]
  for _ in $(seq $(( ${3:-20} * 20 ))); do
    [ "$(status_of "$1")" = "$2" ] && return 0
    sleep 0.05
  done
  echo "timed out: $1 is $(status_of "$1"), wanted $2" >&2
  return 1
}

prepare_run() { # <backend> <workers>
  render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers "$2" --backend "$1" --lead-pane "$LEAD" >/dev/null
}
