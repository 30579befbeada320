#!/usr/bin/env bats

load test_helper

setup() {
  okstra_setup
  export PATH="$REPO_ROOT/tests/fakes:$PATH"
  render-bundle --brief "a test task" --task-key demo/rounds --task-type analysis --workers claude,codex --backend cli-wrapper >/dev/null
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

@test "the translator round writes the report's translation sidecar, which the HTML view shows" {
  render-bundle --brief "a test task" --task-key demo/ko --task-type analysis --workers claude,codex --backend cli-wrapper --report-language ko --replace-active >/dev/null
  team-dispatch >/dev/null 2>&1 && worker-wait --timeout 60 >/dev/null 2>&1
  round-prepare --role report-writer >/dev/null 2>&1
  team-dispatch --round report >/dev/null 2>&1 && worker-wait --timeout 60 >/dev/null 2>&1
  report-draft >/dev/null
  report-finalize >/dev/null
  reports=.okstra/runs/demo--ko--r001/reports
  grep -q "translation-missing" "$reports/final-report-analysis-001.html"
  run round-prepare --role translator --json
  assert_success
  assert_line --partial "\"resultPath\": \"$reports/final-report-analysis-001.ko.md\""
  team-dispatch --round translation >/dev/null 2>&1 && worker-wait --timeout 60 >/dev/null 2>&1
  grep -q '^# .*\[ko\]$' "$reports/final-report-analysis-001.ko.md"
  render-report-views "$reports/final-report-analysis-001.md" >/dev/null
  run grep -q "translation-missing" "$reports/final-report-analysis-001.html"
  assert_failure 1
  grep -q '\[ko\]' "$reports/final-report-analysis-001.html"
}

@test "the translator round refuses before the report exists" {
  render-bundle --brief "a test task" --task-key demo/ko --task-type analysis --workers claude --backend cli-wrapper --report-language ko --replace-active >/dev/null
  team-dispatch >/dev/null 2>&1 && worker-wait --timeout 60 >/dev/null 2>&1
  run --separate-stderr round-prepare --role translator
  assert_failure 2
  [[ "$stderr" == "round-prepare: run demo--ko--r001 has no rendered report to translate"*"finish the report first"* ]]
}
