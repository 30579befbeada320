#!/usr/bin/env bats
# report-finalize: the run's end-of-report step.
# shellcheck disable=SC2154  # bats sets $stderr and $stderr_lines

load test_helper

FIX="$BATS_TEST_DIRNAME/../fixtures/reports"
RUN=.okstra/runs/feature--rate-limit--r003

setup() {
  okstra_setup
  # Run 3 of the task produces report 1 (earlier runs wrote no report).
  python3 - "$REPO_ROOT/lib" "$FIX" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from okstra.core import fsio
from okstra.model.run_manifest import RunManifest
from okstra.model import layout
root = Path(".").resolve()
run = layout.for_project(root).run("feature--rate-limit--r003")
rel = run.relative
m = RunManifest(run_id=run.run_id, task_key="feature/rate-limit", task_type="implementation-planning", run_number=3,
                report_number=1, terminal_backend="cli-wrapper", created_at="2026-11-30T14:00:00Z", run_dir=rel(run.dir),
                team_state_path=rel(run.team_state), prompts_dir=rel(run.prompts_dir), results_dir=rel(run.results_dir),
                logs_dir=rel(run.logs_dir), reports_dir=rel(run.reports_dir))
fsio.write_json(run.manifest, m.to_dict())
doc = json.load(open(Path(sys.argv[2]) / "implementation-planning.data.json"))
doc["header"].update(runNumber=3, reportNumber=1, runId=run.run_id)
fsio.write_json(run.report_data("implementation-planning", 1), doc)
PY
}

@test "renders by report number, commits the sequence and records the final status" {
  run report-finalize --run-manifest "$RUN/run-manifest.json"
  assert_success
  assert_line "markdown      $RUN/reports/final-report-implementation-planning-001.md"
  assert_line "html          $RUN/reports/final-report-implementation-planning-001.html"
  assert_line "sidecar       $RUN/reports/user-responses/user-response-implementation-planning-001.md"
  assert [ -f "$RUN/reports/final-report-implementation-planning-001.md" ]
  assert [ -f "$RUN/reports/final-report-implementation-planning-001.data.json.last-valid" ]
  grep -q '"finalStatus": "completed"' "$RUN/run-manifest.json"
  grep -q '"reports": 1' .okstra/tasks/feature/rate-limit/task.json
}

@test "--json prints the paths and numbers" {
  run report-finalize --run-manifest "$RUN/run-manifest.json" --json
  assert_success
  [[ "$output" == *'"reportNumber": 1'* ]]
  [[ "$output" == *'"runNumber": 3'* ]]
  [[ "$output" == *'"finalStatus": "completed"'* ]]
}

@test "invalid report data exits 1 and changes nothing" {
  sed -i 's/"stepCount": 4/"stepCount": 0/' "$RUN/reports/final-report-implementation-planning-001.data.json"
  before=$(tree_snapshot "$PROJECT/.okstra")
  run --separate-stderr report-finalize --run-manifest "$RUN/run-manifest.json"
  assert_failure 1
  [[ "$stderr" == *"\$.implementationPlanning.stageMap[0].stepCount: 0 is less than the minimum of 1"* ]]
  [ "$(tree_snapshot "$PROJECT/.okstra")" = "$before" ]
}

@test "without an active run or a manifest it exits 2" {
  run --separate-stderr report-finalize
  assert_failure 2
  [[ "$stderr" == "report-finalize: no active run in "*" (.okstra/active-run.json); pass --run-manifest "* ]]
}

@test "refuses a manifest outside the project" {
  run --separate-stderr report-finalize --run-manifest ../run-manifest.json
  assert_failure 2
  [[ "$stderr" == *"outside the project"* ]]
}
