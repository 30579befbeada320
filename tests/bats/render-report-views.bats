#!/usr/bin/env bats
# render-report-views: the self-contained HTML view of a final report.
# shellcheck disable=SC2154  # bats sets $stderr and $stderr_lines

load test_helper

FIX="$BATS_TEST_DIRNAME/../fixtures/reports"
R=.okstra/runs/feature--rate-limit--r001/reports

setup() {
  okstra_setup
  mkdir -p "$PROJECT/$R"
  cp "$FIX/analysis.data.json" "$PROJECT/$R/final-report-analysis-001.data.json"
}

@test "writes the page beside the report and prints its path" {
  run --separate-stderr render-report-views "$R/final-report-analysis-001.md"
  assert_success
  assert_output "$R/final-report-analysis-001.html"
  grep -q '<script type="application/json" id="okstra-meta">' "$R/final-report-analysis-001.html"
  grep -q 'id="export-button"' "$R/final-report-analysis-001.html"
}

@test "embeds the sha256 of the source data" {
  run render-report-views "$R/final-report-analysis-001.data.json" --json
  assert_success
  sum=$(sha256sum "$R/final-report-analysis-001.data.json" | cut -d' ' -f1)
  [[ "$output" == *"\"sha256\": \"$sum\""* ]]
  grep -q "id=\"source-sha256\">$sum<" "$R/final-report-analysis-001.html"
}

@test "says when the translation is missing and renders it when present" {
  run --separate-stderr render-report-views "$R/final-report-analysis-001.md"
  assert_success
  [[ "$stderr" == *"translation is missing"* ]]
  grep -q 'id="translation-missing"' "$R/final-report-analysis-001.html"
  printf '# 번역된 보고서\n' > "$R/final-report-analysis-001.ko.md"
  run --separate-stderr render-report-views "$R/final-report-analysis-001.md"
  assert_success
  [ -z "$stderr" ]
  grep -q '<h1>번역된 보고서</h1>' "$R/final-report-analysis-001.html"
}

@test "a script in a finding is escaped" {
  python3 - "$R/final-report-analysis-001.data.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["findings"][0]["title"] = "</script><script>alert(1)</script>"
json.dump(d, open(sys.argv[1], "w"))
PY
  run render-report-views "$R/final-report-analysis-001.md"
  assert_success
  run ! grep -q '<script>alert(1)' "$R/final-report-analysis-001.html"
  grep -q '&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;' "$R/final-report-analysis-001.html"
}

@test "invalid report data exits 1 and writes nothing" {
  sed -i 's/"severity": "high"/"severity": "severe"/' "$R/final-report-analysis-001.data.json"
  before=$(tree_snapshot "$PROJECT")
  run --separate-stderr render-report-views "$R/final-report-analysis-001.md"
  assert_failure 1
  [[ "$stderr" == "render-report-views: \$.findings[0].severity: 'severe' is not one of"* ]]
  [ "$(tree_snapshot "$PROJECT")" = "$before" ]
}

@test "refuses an output outside the project" {
  before=$(tree_snapshot "$PROJECT")
  run --separate-stderr render-report-views "$R/final-report-analysis-001.md" --output /tmp/escape.html
  assert_failure 2
  [[ "$stderr" == *"outside the project"* ]]
  [ "$(tree_snapshot "$PROJECT")" = "$before" ]
}

@test "a missing report exits 2 with one line" {
  run --separate-stderr render-report-views "$R/final-report-analysis-009.md"
  assert_failure 2
  [ "${#stderr_lines[@]}" -eq 1 ]
}

@test "refuses an output onto a sidecar, a state file or outside the run's reports folder, writing nothing" {
  mkdir -p "$R/user-responses" src
  printf 'the user answers\n' > "$R/user-responses/user-response-analysis-001.md"
  printf 'print(1)\n' > src/app.py
  before=$(tree_snapshot "$PROJECT")
  for target in "$R/user-responses/user-response-analysis-001.md" .okstra/active-run.json \
    .okstra/runs/feature--rate-limit--r001/team-state.json src/app.py index.html; do
    run --separate-stderr render-report-views "$R/final-report-analysis-001.md" --output "$target"
    [ "$status" -eq 2 ] || { echo "$target: exit $status"; return 1; }
    [ "${#stderr_lines[@]}" -eq 1 ] || { echo "$target: $stderr"; return 1; }
  done
  [ "$(tree_snapshot "$PROJECT")" = "$before" ]
}

@test "writes an output named inside the run's reports folder" {
  run --separate-stderr render-report-views "$R/final-report-analysis-001.md" --output "$R/copy.html"
  assert_success
  assert_output "$R/copy.html"
}
