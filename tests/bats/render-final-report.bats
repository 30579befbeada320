#!/usr/bin/env bats
# render-final-report: validate report data, render Markdown, keep the last valid input.
# shellcheck disable=SC2154  # bats sets $stderr and $stderr_lines

load test_helper

FIX="$BATS_TEST_DIRNAME/../fixtures/reports"

setup() {
  okstra_setup
  mkdir -p "$PROJECT/reports"
}

@test "renders a valid report beside its data and keeps a last-valid copy" {
  cp "$FIX/analysis.data.json" reports/a.data.json
  run render-final-report reports/a.data.json
  assert_success
  assert_output "reports/a.md"
  assert [ -f reports/a.md ]
  cmp reports/a.data.json reports/a.data.json.last-valid
  run head -1 reports/a.md
  assert_output "# Final report: analysis — feature/rate-limit (report 001)"
}

@test "reports every schema error with its JSON path and exits 1 writing nothing" {
  cp "$FIX/analysis.data.json" reports/a.data.json
  python3 - <<'PY'
import json
p = "reports/a.data.json"
d = json.load(open(p))
d["header"]["createdAt"] = "soon"
d["findings"][1]["severity"] = "severe"
json.dump(d, open(p, "w"))
PY
  before=$(tree_snapshot "$PROJECT")
  run --separate-stderr render-final-report reports/a.data.json
  assert_failure 1
  assert_output ""
  [ "${#stderr_lines[@]}" -eq 2 ]
  [[ "${stderr_lines[0]}" == "render-final-report: \$.findings[1].severity: 'severe' is not one of"* ]]
  [[ "${stderr_lines[1]}" == "render-final-report: \$.header.createdAt: 'soon' is not a 'date-time'" ]]
  [ "$(tree_snapshot "$PROJECT")" = "$before" ]
}

@test "every broken fixture exits 1 naming its JSON path" {
  python3 -c 'import json,sys; [print(k, v["path"]) for k, v in json.load(open(sys.argv[1])).items()]' "$FIX/broken/expected.json" |
    while read -r name path; do
      cp "$FIX/broken/$name.data.json" reports/b.data.json
      run --separate-stderr render-final-report --no-snapshot reports/b.data.json
      [ "$status" -eq 1 ] || { echo "$name: exit $status"; return 1; }
      [[ "$stderr" == *"render-final-report: $path: "* ]] || { echo "$name: $stderr"; return 1; }
    done
}

@test "a malformed data file exits 2 with one line" {
  printf '{"schemaVersion": ' > reports/bad.data.json
  run --separate-stderr render-final-report reports/bad.data.json
  assert_failure 2
  [ "${#stderr_lines[@]}" -eq 1 ]
  [[ "$stderr" == "render-final-report: "*"not valid JSON at line 1"* ]]
  [ ! -e reports/bad.md ]
}

@test "a missing data file exits 2" {
  run --separate-stderr render-final-report reports/none.data.json
  assert_failure 2
  [[ "$stderr" == *"no such report data file"* ]]
}

@test "refuses an output path outside the project and changes nothing" {
  cp "$FIX/analysis.data.json" reports/a.data.json
  before=$(tree_snapshot "$PROJECT")
  run --separate-stderr render-final-report reports/a.data.json --output ../escape.md
  assert_failure 2
  [[ "$stderr" == *"outside the project"* ]]
  [ ! -e "$BATS_TEST_TMPDIR/escape.md" ]
  [ "$(tree_snapshot "$PROJECT")" = "$before" ]
}

@test "--no-snapshot writes nothing beside the input" {
  cp "$FIX/verification.data.json" reports/v.data.json
  run render-final-report reports/v.data.json --no-snapshot
  assert_success
  run ls reports
  assert_output "v.data.json
v.md"
}

@test "refuses an output onto a sidecar, a state file or outside the run's reports folder, writing nothing" {
  R=.okstra/runs/feature--rate-limit--r001/reports
  mkdir -p "$R/user-responses" src
  cp "$FIX/analysis.data.json" "$R/final-report-analysis-001.data.json"
  printf 'the user answers\n' > "$R/user-responses/user-response-analysis-001.md"
  before=$(tree_snapshot "$PROJECT")
  for target in "$R/user-responses/user-response-analysis-001.md" .okstra/active-run.json \
    .okstra/runs/feature--rate-limit--r001/team-state.json "$R/final-report-analysis-001.data.json" src/app.md CLAUDE.md; do
    run --separate-stderr render-final-report "$R/final-report-analysis-001.data.json" --output "$target"
    [ "$status" -eq 2 ] || { echo "$target: exit $status"; return 1; }
    [ "${#stderr_lines[@]}" -eq 1 ] || { echo "$target: $stderr"; return 1; }
  done
  [ "$(tree_snapshot "$PROJECT")" = "$before" ]
}

@test "refuses --output for report data that is not a run's report" {
  cp "$FIX/analysis.data.json" reports/a.data.json
  run --separate-stderr render-final-report reports/a.data.json --output reports/b.md
  assert_failure 2
  [[ "$stderr" == "render-final-report: --output: "*"not in a run's reports folder"* ]]
  [ ! -e reports/b.md ]
}

@test "a copy that cannot be written warns and still exits 0" {
  cp "$FIX/analysis.data.json" reports/a.data.json
  mkdir reports/a.data.json.last-valid
  run --separate-stderr render-final-report reports/a.data.json
  assert_success
  [[ "$stderr" == "render-final-report: warning: could not keep a.data.json.last-valid"* ]]
  assert [ -f reports/a.md ]
}

@test "a lead-authored fallback is checked against team state and the approving sidecar" {
  cp -R "$FIX/lead-fallback/." "$PROJECT/"
  data=.okstra/runs/feature--rate-limit--r002/reports/final-report-analysis-001.data.json
  run render-final-report "$data" --json
  assert_success
  [[ "$output" == *'"problems": []'* ]]
  grep -q '^| Lead-authored fallback | report-writer dispatch failed — `no result after 900 s' "${data%.data.json}.md"
  sed -i 's/API rate limit reached/timeout/' "$data"
  run --separate-stderr render-final-report "$data"
  assert_failure 1
  [[ "$stderr" == "render-final-report: \$.header.leadAuthoredFallback.dispatchFailureReason: differs from the reason recorded"* ]]
}

@test "--help shows usage, exit codes and an example" {
  run render-final-report --help
  assert_success
  assert_line --partial "Usage: render-final-report DATA.json"
  assert_line --partial "Exit codes:"
}
