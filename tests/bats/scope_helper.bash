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

add_implementer() { # <provider>: a second implementer worker <provider>-implementer in the stage run
  python3 - "$REPO_ROOT" "$STAGE_RUN_DIR" "$1" <<'PY'
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1] + "/lib")
from okstra.core import fsio
from okstra.model import run_manifest, team_state
from okstra.model.dispatch import Dispatch
from okstra.model.run_manifest import Assignment, Participant, RoleExecution
from okstra.model.team_state import TeamState
from okstra.run import catalog, prompts
from okstra.model.layout import RunLayout

run_dir, provider_id = Path(sys.argv[2]).resolve(), sys.argv[3]
manifest = run_manifest.load(run_dir / "run-manifest.json")
layout = RunLayout(Path(".").resolve(), manifest.run_id)
cat = catalog.load(layout.project_root)
provider = cat.provider(provider_id)
model = provider.default
worker = f"{provider_id}-implementer"
manifest = manifest.evolve(
    assignments=(*manifest.assignments, Assignment(worker, provider_id, model.id, model.cli_model, provider.runner, ("implementer",))),
    participants=(*manifest.participants, Participant(worker, "implementer", provider_id, provider.display, model.id, model.display)),
    role_executions=(*manifest.role_executions, RoleExecution("implementer", worker, provider_id, model.id, provider.runner)),
)
fsio.write_json(layout.manifest, manifest.to_dict())
rel = layout.relative
d = Dispatch(worker, "implementer", provider_id, model.id, round="implementation", prompt_path=rel(layout.prompt_path(worker)),
             result_path=rel(layout.result_path(worker)), log_path=rel(layout.log_path(worker)),
             liveness_artifact=rel(layout.heartbeat_path(worker)))
fsio.atomic_write(layout.prompt_path(worker), prompts.render(manifest, d, cat, brief="Edit the limiter.", run_layout=layout))
team_state.update(layout.team_state, lambda s: TeamState(s.run_id, s.dispatches + (d,)))
PY
}
