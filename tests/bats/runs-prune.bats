#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $stderr
# runs-prune: old runs leave .okstra/runs/, the active run never does.

load test_helper

setup() {
  okstra_setup
}

two_old_runs() {
  render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude >/dev/null 2>&1
  render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude --replace-active >/dev/null 2>&1
  find "$PROJECT/.okstra/runs" -exec touch -h -d '40 days ago' {} +
}

@test "removes runs untouched for longer than the age and keeps the active one" {
  two_old_runs
  run --separate-stderr runs-prune --older-than 30d
  assert_success
  assert_output --regexp '^feature--demo--r001	40\.[0-9]d	[0-9.]+ KB$'
  [ "$stderr" = "runs-prune: removed 1 run(s), ${output##*	}" ]
  [ ! -e "$PROJECT/.okstra/runs/feature--demo--r001" ]
  [ -f "$PROJECT/.okstra/runs/feature--demo--r002/run-manifest.json" ]
}

@test "--dry-run lists the same runs and removes nothing" {
  two_old_runs
  before=$(tree_snapshot "$PROJECT/.okstra")
  run --separate-stderr runs-prune --older-than 30d --dry-run --json
  assert_success
  run python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["dryRun"], [(r["runId"], r["pruned"]) for r in d["runs"]])' <<<"$output"
  assert_output "True [('feature--demo--r001', False)]"
  [ "$(tree_snapshot "$PROJECT/.okstra")" = "$before" ]
}

@test "a run touched recently is not old, whenever it started" {
  two_old_runs
  touch "$PROJECT/.okstra/runs/feature--demo--r001/team-state.json"
  run --separate-stderr runs-prune --older-than 30d
  assert_success
  assert_output ""
  [ -d "$PROJECT/.okstra/runs/feature--demo--r001" ]
}

@test "a bad age exits 2 with one line and removes nothing" {
  two_old_runs
  before=$(tree_snapshot "$PROJECT/.okstra")
  run --separate-stderr runs-prune --older-than 30days
  assert_failure 2
  [ "$stderr" = "runs-prune: argument --older-than: '30days' is not an age such as 90m, 12h, 30d or 8w; see 'runs-prune --help'" ]
  [ "$(tree_snapshot "$PROJECT/.okstra")" = "$before" ]
}

@test "okstra runs prune reaches it through the dispatcher" {
  run --separate-stderr okstra runs prune --older-than 1d --dry-run
  assert_success
  [ "$stderr" = "runs-prune: would remove 0 run(s), 0 B" ]
}
