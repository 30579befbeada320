#!/usr/bin/env bats

load test_helper

setup() {
  okstra_setup
  export PATH="$REPO_ROOT/tests/fakes:$PATH"
  render-bundle --task-key demo/rounds --task-type analysis --workers claude,codex --backend cli-wrapper >/dev/null
}

@test "adds the report-writer round after the first round finished" {
  team-dispatch >/dev/null 2>&1
  worker-wait --timeout 60 >/dev/null 2>&1
  run --separate-stderr round-prepare --role report-writer
  assert_success
  assert_output --regexp $'^claude\tattempt 2\t.*/prompts/claude.attempt-2.md$'
  [ "$stderr" = "round-prepare: next: team-dispatch --round report" ]
}

@test "refuses while a worker is still pending and changes nothing" {
  before=$(tree_snapshot .okstra)
  run --separate-stderr round-prepare --role report-writer
  assert_failure 2
  [[ "$stderr" == "round-prepare: worker claude is still pending"* ]]
  [ "$(tree_snapshot .okstra)" = "$before" ]
}

@test "refuses an unknown role with the allowed ones" {
  run --separate-stderr round-prepare --role boss
  assert_failure 2
  [ "$stderr" = "round-prepare: --role 'boss' is not a later-round role; use one of verifier, critic, report-writer, translator" ]
}

@test "refuses a run manifest that is not a run manifest" {
  printf '{"x": 1}' > bogus.json
  run --separate-stderr round-prepare --role report-writer --run-manifest bogus.json
  assert_failure 2
  [ "${#lines[@]}" -eq 0 ]
}
