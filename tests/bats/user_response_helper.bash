# Shared set-up for the user-response and stage bats files: a prepared run
# (feature/rate-limit, run 2, implementation-planning) whose reports folder holds
# the implementation-planning fixture report data with a second, choice question.

RUN_ID="feature--rate-limit--r002"
REPORT=".okstra/runs/$RUN_ID/reports/final-report-implementation-planning-001.md"
SIDECAR=".okstra/runs/$RUN_ID/reports/user-responses/user-response-implementation-planning-001.md"
MANIFEST=".okstra/runs/$RUN_ID/run-manifest.json"
export RUN_ID REPORT SIDECAR MANIFEST

make_report_run() {
  python3 - "$REPO_ROOT" <<'PY'
import json, sys
from pathlib import Path
repo = Path(sys.argv[1])
sys.path[:0] = [str(repo / "lib"), str(repo / "tests")]
from fixtures.runs import make_run
layout, _ = make_run(Path("."), task_type="implementation-planning", run_number=2)
data = json.loads((repo / "tests/fixtures/reports/implementation-planning.data.json").read_text(encoding="utf-8"))
data["openQuestions"].append({"id": "Q2", "question": "Which tier?", "kind": "choice", "options": ["free", "paid"]})
layout.report_data("implementation-planning", 1).write_text(json.dumps(data), encoding="utf-8")
PY
}
