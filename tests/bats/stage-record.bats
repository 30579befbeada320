#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $stderr

load test_helper

setup() { okstra_setup; }

LOG=.okstra/tasks/feature/rate-limit/consumers.jsonl

@test "appends one line per finished stage" {
  run stage-record --task-key feature/rate-limit --stage 1 --status "done" --head-commit ABCDEF0
  assert_success
  assert_output "$LOG: stage 1 done at abcdef0"
  stage-record --task-key feature/rate-limit --stage 2 --status failed
  [ "$(wc -l < "$LOG")" -eq 2 ]
  grep -q '"stage": 2, "status": "failed", "headCommit": null' "$LOG"
}

@test "refuses recording a stage twice as done and changes nothing" {
  stage-record --task-key feature/rate-limit --stage 1 --status "done" --head-commit abcdef0
  local before
  before="$(tree_snapshot "$PROJECT")"
  run --separate-stderr stage-record --task-key feature/rate-limit --stage 1 --status "done" --head-commit abcdef1
  assert_failure 2
  [[ "$stderr" == "stage-record: stage 1 of feature/rate-limit is already recorded done"* ]]
  [ "$(tree_snapshot "$PROJECT")" = "$before" ]
}

@test "refuses hostile arguments with exit 2, one line, and nothing on disk" {
  local before
  before="$(tree_snapshot "$PROJECT")"
  run --separate-stderr stage-record --task-key ../../etc --stage 1 --status "done" --head-commit abcdef0
  assert_failure 2
  [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
  run --separate-stderr stage-record --task-key a/b --stage 1 --status "done" --head-commit 'abc; rm -rf /'
  assert_failure 2
  [[ "$stderr" == *"is not a commit SHA"* ]]
  run --separate-stderr stage-record --task-key a/b --stage -1 --status "done" --head-commit abcdef0
  assert_failure 2
  run --separate-stderr stage-record --task-key a/b --stage 1 --status "done"
  assert_failure 2
  [[ "$stderr" == *"--head-commit: required when the status is done"* ]]
  run --separate-stderr stage-record --task-key a/b --stage 1 --status finished
  assert_failure 2
  run --separate-stderr stage-record --task-key a/b --stage 1 --status "done" --head-commit abcdef0 --project-root /nonexistent
  assert_failure 2
  [ "$(tree_snapshot "$PROJECT")" = "$before" ]
}

@test "a corrupt consumer log is refused naming its line" {
  mkdir -p "$(dirname "$LOG")"
  printf '{"stage": 1}\n' > "$LOG"
  run --separate-stderr stage-record --task-key feature/rate-limit --stage 2 --status failed
  assert_failure 2
  [[ "$stderr" == *"consumers.jsonl:1: status"* ]]
}

@test "recording the active stage ends its run: edits outside its paths are allowed again (issue 11 #2)" {
  load run_helper
  render-bundle --brief "a test task" --task-key feature/rate-limit --task-type analysis --workers claude --backend cli-wrapper >/dev/null
  stage_scope "src/**"
  [[ "$(guard_edit README.md)" == *'"permissionDecision":"deny"'* ]]
  run --separate-stderr stage-record --task-key feature/rate-limit --stage 1 --status "done" --head-commit abcdef0
  assert_success
  [[ "$stderr" == "stage-record: run feature--rate-limit--r001 ended"* ]]
  [ ! -e .okstra/active-run.json ]
  [ -z "$(guard_edit README.md)" ]
}

@test "recording another stage leaves the active run alone" {
  load run_helper
  render-bundle --brief "a test task" --task-key feature/rate-limit --task-type analysis --workers claude --backend cli-wrapper >/dev/null
  stage_scope "src/**"
  stage-record --task-key feature/rate-limit --stage 2 --status failed
  [ -e .okstra/active-run.json ]
}
