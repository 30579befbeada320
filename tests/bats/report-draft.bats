#!/usr/bin/env bats

load test_helper

setup() {
  okstra_setup
  export PATH="$REPO_ROOT/tests/fakes:$PATH"
  render-bundle --brief "a test task" --task-key demo/draft --task-type analysis --workers claude,codex --backend cli-wrapper >/dev/null
}

@test "drafts valid report data from the report writer's result" {
  team-dispatch >/dev/null 2>&1 && worker-wait --timeout 60 >/dev/null 2>&1
  round-prepare --role report-writer >/dev/null 2>&1
  team-dispatch --round report >/dev/null 2>&1 && worker-wait --timeout 60 >/dev/null 2>&1
  run report-draft --owner "Demo User"
  assert_success
  assert_output ".okstra/runs/demo--draft--r001/reports/final-report-analysis-001.data.json"
  run render-final-report --no-snapshot "$output"
  assert_success
}

@test "without a report writer it refuses and points at the ways forward" {
  run --separate-stderr report-draft
  assert_failure 2
  [[ "$stderr" == *"has no completed report-writer dispatch; run round-prepare --role report-writer"* ]]
  [ ! -e .okstra/runs/demo--draft--r001/reports/final-report-analysis-001.data.json ]
}

@test "a skeleton names the lead as author" {
  run report-draft --skeleton --json
  assert_success
  assert_line --partial '"reportAuthor": "Okstra lead"'
}

@test "sweeps the temporary a killed earlier draft left, and only that file's" {
  reports=.okstra/runs/demo--draft--r001/reports
  mkdir -p "$reports"
  # What a report-draft killed mid-write leaves, and a render-final-report's copy in flight.
  printf '{"header": ' >"$reports/.final-report-analysis-001.data.json.k1ll3dab.tmp"
  printf 'in flight' >"$reports/.final-report-analysis-001.data.json.last-valid.a1b2c3d4.tmp"
  run report-draft --skeleton
  assert_success
  assert_output "$reports/final-report-analysis-001.data.json"
  [ ! -e "$reports/.final-report-analysis-001.data.json.k1ll3dab.tmp" ]
  [ -e "$reports/.final-report-analysis-001.data.json.last-valid.a1b2c3d4.tmp" ]
  run python3 -c 'import json,sys; h = json.load(open(sys.argv[1]))["header"]; print(h["runId"], h["reportAuthor"])' "$output"
  assert_output "demo--draft--r001 Okstra lead"
}
