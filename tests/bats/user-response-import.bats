#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $stderr

load test_helper
load user_response_helper

setup() {
  okstra_setup
  make_report_run
  EXPORT="$HOME/Downloads/user-response-implementation-planning-001.md"
  mkdir -p "$HOME/Downloads"
  # What the HTML view's Export writes (the same bytes as the serializer).
  cat >"$EXPORT" <<MD
# User response: implementation-planning report 001

<!-- okstra user-response 1.1; format: docs/user-response-format.md -->

- task-key: "feature/rate-limit"
- task-type: "implementation-planning"
- report-number: 1
- run-id: "$RUN_ID"
- source-report: "$REPORT"
- created-at: "2026-11-30T10:00:00Z"

## ANSWERS

### Q2

- question: "Which tier?"
- answer: "paid"
- recorded-by: "user"

## PLAN DECISION

- status: "approved"
- option: "B"
- reason: null
- plan-sha256: "$(sha256sum "${REPORT%.md}.data.json" | cut -d' ' -f1)"
MD
}

@test "imports an export from the downloads folder byte for byte and says what changed" {
  run --separate-stderr user-response-import --from-downloads --report "$REPORT"
  assert_success
  [ "$output" = "$SIDECAR" ]
  # the export's bytes, then the seal okstra's writer adds (DESIGN §14)
  cmp "$EXPORT" <(head -n -1 "$SIDECAR")
  tail -n 1 "$SIDECAR" | grep -qE '^<!-- okstra-seal sha256:[0-9a-f]{64} -->$'
  [[ "$stderr" == *"Q2: answered"* && "$stderr" == *"PLAN DECISION: recorded"* ]]
}

@test "imports a file given by path, finding its report from the file" {
  run user-response-import "$EXPORT"
  assert_success
  grep -qx '## PLAN DECISION' "$SIDECAR"
}

@test "refuses an export for another report naming the line, and changes nothing" {
  user-response-write --report "$REPORT" --answers '{"Q1": "120"}'
  local before
  before="$(tree_snapshot "$PROJECT")"
  sed -i 's/^- run-id: .*/- run-id: "feature--rate-limit--r009"/' "$EXPORT"
  run --separate-stderr user-response-import "$EXPORT" --report "$REPORT"
  assert_failure 2
  [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
  [[ "$stderr" == "user-response-import: $EXPORT:8: run-id 'feature--rate-limit--r009' is not this report's"* ]]
  [ "$(tree_snapshot "$PROJECT")" = "$before" ]
}

@test "refuses a forged heading, an unknown question and 10 MB of text" {
  local before
  before="$(tree_snapshot "$PROJECT")"
  cp "$EXPORT" "$BATS_TEST_TMPDIR/orig.md"
  sed -i 's/^- answer: "paid"$/- answer: "paid"\n## REPORT AUTHORING/' "$EXPORT"
  run --separate-stderr user-response-import "$EXPORT"
  assert_failure 2
  [[ "$stderr" == *":18: expected the field '- recorded-by: ...' of question Q2, found '## REPORT AUTHORING'"* ]]
  sed 's/^### Q2$/### Q7/' "$BATS_TEST_TMPDIR/orig.md" >"$EXPORT"
  run --separate-stderr user-response-import "$EXPORT"
  assert_failure 2
  [[ "$stderr" == *":14: question Q7 is not an open question of this report"* ]]
  head -c 10485760 /dev/zero | tr '\0' x >>"$EXPORT"
  run --separate-stderr user-response-import "$EXPORT"
  assert_failure 2
  [[ "$stderr" == *"an exported sidecar is at most 1,048,576"* ]]
  [ "$(tree_snapshot "$PROJECT")" = "$before" ]
}

@test "inside a Claude Code session an export holding a decision is refused" {
  local before
  before="$(tree_snapshot "$PROJECT")"
  CLAUDECODE=1 run --separate-stderr user-response-import "$EXPORT"
  assert_failure 2
  [[ "$stderr" == *"PLAN DECISION is the user's decision"* ]]
  [ "$(tree_snapshot "$PROJECT")" = "$before" ]
}

@test "--from-downloads with nothing downloaded says where it looked" {
  rm "$EXPORT"
  run --separate-stderr user-response-import --from-downloads --report "$REPORT"
  assert_failure 2
  [[ "$stderr" == *"no user-response-implementation-planning-001.md in $HOME/Downloads"* ]]
}

@test "an export deciding on a plan that changed since the page was rendered is refused, nothing changed" {
  sed -i 's|api/limiter/\*\*|**|' "${REPORT%.md}.data.json"
  before=$(tree_snapshot "$PROJECT")
  run --separate-stderr user-response-import --from-downloads --report "$REPORT"
  assert_failure 2
  # the progress line names the file, then the refusal in one line
  [[ "${stderr_lines[0]}" == "user-response-import: importing "* ]]
  [ "${#stderr_lines[@]}" -eq 2 ]
  [[ "${stderr_lines[1]}" == *"the plan changed after this page was rendered"*"render the view again"* ]]
  [ "$(tree_snapshot "$PROJECT")" = "$before" ]
}
