#!/usr/bin/env bats
# Worktree isolation on real git and real tmux: each implementer in its own worktree,
# stage-check per worktree, stage-merge back, teardown removing only what it created.
# shellcheck disable=SC2154  # bats sets $stderr

load test_helper
load team_helper
load scope_helper

setup() {
  team_setup
  git_project
  approved_plan
  export RUN_DIR="$PROJECT/$STAGE_RUN_DIR"
}
teardown() { team_teardown; }

@test "two isolated implementers edit the same file: each worktree in scope, the second merge refused with the conflict" {
  stage_run --isolate worktree --backend tmux-pane --lead-pane "$LEAD"
  add_implementer claude
  OKSTRA_FAKE_EDITS="write:api/limiter/shared.py" run --separate-stderr team-dispatch
  assert_success
  [ "$(panes | wc -l)" -eq 3 ]
  wait_status codex completed
  wait_status claude-implementer completed
  # Each provider ran in its own worktree, on a branch named after the run and the worker.
  [ "$(git -C "$STAGE_RUN_DIR/worktrees/codex" rev-parse --abbrev-ref HEAD)" = "okstra/feature--rate-limit--r001/codex" ]
  grep -q "edited by fake codex in $PROJECT/$STAGE_RUN_DIR/worktrees/codex" "$STAGE_RUN_DIR/worktrees/codex/api/limiter/shared.py"
  grep -q "edited by fake claude in $PROJECT/$STAGE_RUN_DIR/worktrees/claude-implementer" "$STAGE_RUN_DIR/worktrees/claude-implementer/api/limiter/shared.py"
  [ "$(cat api/limiter/shared.py)" = "shared line" ]
  run --separate-stderr stage-check
  assert_success
  assert_line "worktree of codex ($STAGE_RUN_DIR/worktrees/codex): 1 changed since $(git rev-parse HEAD | cut -c1-12), 0 out of scope"
  assert_line "  ok  M api/limiter/shared.py  by codex"
  assert_line "  ok  M api/limiter/shared.py  by claude-implementer"
  run --separate-stderr stage-merge --worker codex
  assert_success
  assert_output --regexp "^codex: okstra/feature--rate-limit--r001/codex merged \(fast-forward\) at [0-9a-f]{12}$"
  grep -q "edited by fake codex" api/limiter/shared.py
  local head
  head="$(git rev-parse HEAD)"
  run --separate-stderr stage-merge --worker claude-implementer
  assert_failure 1
  [[ "$stderr" == *"stage-merge: conflict: api/limiter/shared.py"* ]]
  [[ "$stderr" == *"claude-implementer's branch okstra/feature--rate-limit--r001/claude-implementer was not merged: the merge was aborted and nothing changed"* ]]
  [ "$(git rev-parse HEAD)" = "$head" ]
  [ -z "$(git status --porcelain)" ]
  # Teardown removes both worktrees; the merged branch goes, the unmerged one stays (said).
  git worktree add -q ../not-okstras -b someone-elses
  run --separate-stderr team-teardown --grace 3
  assert_success
  [[ "$stderr" == *"worktree $STAGE_RUN_DIR/worktrees/codex of codex removed; merged: branch deleted"* ]]
  [[ "$stderr" == *"worktree $STAGE_RUN_DIR/worktrees/claude-implementer of claude-implementer removed; branch okstra/feature--rate-limit--r001/claude-implementer kept: it holds work not merged"* ]]
  [ ! -e "$STAGE_RUN_DIR/worktrees/codex" ]
  run ! git show-ref -q --verify refs/heads/okstra/feature--rate-limit--r001/codex
  git show-ref -q --verify refs/heads/okstra/feature--rate-limit--r001/claude-implementer
  [ -d ../not-okstras ]
  git worktree list | grep -q "not-okstras"
}

@test "an out-of-scope worktree is not merged" {
  stage_run --isolate worktree
  OKSTRA_FAKE_EDITS="write:README.md" team-dispatch >/dev/null 2>&1
  wait_status codex completed
  run --separate-stderr stage-check
  assert_failure 1
  assert_line "  OUT M README.md  by codex  (outside stage 1's planned paths)"
  run --separate-stderr stage-merge --worker codex
  assert_failure 1
  [[ "$stderr" == *"stage-merge: out of scope in codex's worktree: $STAGE_RUN_DIR/worktrees/codex/README.md"* ]]
  [ "$(cat README.md)" = "# readme" ]
  run --separate-stderr stage-merge --worker nobody
  assert_failure 2
  team-teardown --grace 3 >/dev/null 2>&1
}
