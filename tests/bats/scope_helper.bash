# Shared set-up for stage-check / stage-merge: a real git project with one commit,
# an approved implementation plan (the implementation-planning fixture, stage 1
# planned paths api/limiter/** and tests/limiter/**), and `stage_run` rendering
# stage 1 of it with render-bundle --stage 1 --plan.

PLAN_RUN="feature--rate-limit--r002"
PLAN=".okstra/runs/$PLAN_RUN/reports/final-report-implementation-planning-001.md"
STAGE_RUN_DIR=".okstra/runs/feature--rate-limit--r001"
export PLAN_RUN PLAN STAGE_RUN_DIR

git_project() {
  git config --global user.name tester
  git config --global user.email tester@example.com
  git config --global init.defaultBranch main
  printf '.okstra/\n' > .gitignore
  mkdir -p api/limiter docs
  printf 'def take():\n    return True\n' > api/limiter/core.py
  printf 'shared line\n' > api/limiter/shared.py
  printf '# readme\n' > README.md
  git add -A && git commit -q -m initial
}

approved_plan() {
  python3 - "$REPO_ROOT" <<'PY'
import json, shutil, sys
from pathlib import Path
repo = Path(sys.argv[1])
sys.path[:0] = [str(repo / "lib"), str(repo / "tests")]
from fixtures.runs import make_run
layout, _ = make_run(Path("."), task_type="implementation-planning", run_number=2, activate=False)
shutil.copy(repo / "tests/fixtures/reports/implementation-planning.data.json", layout.report_data("implementation-planning", 1))
layout.report_markdown("implementation-planning", 1).write_text("# plan\n", encoding="utf-8")
PY
  user-response-write --report "$PLAN" --answers '{}' \
    --plan-decision '{"status": "approved", "option": "A", "reason": "looks right"}' >/dev/null
}

stage_run() { # [extra render-bundle options]
  render-bundle --task-key feature/rate-limit --task-type implementation --workers codex --executor codex \
    --stage 1 --plan "$PLAN" "$@" >/dev/null
}

wait_workers() { # [worker-wait options]
  worker-wait --run-manifest "$STAGE_RUN_DIR/run-manifest.json" --timeout 60 "$@" >/dev/null
}
