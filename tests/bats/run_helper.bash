# Helpers for the bats files about a run's lifecycle (issue 11): make the active run a
# stage run, and ask the real write-guard door about an edit as Claude Code would.

# stage_scope PLANNED...: the active run becomes implementation stage 1 of its task with
# these planned paths (what render-bundle --stage writes), through the model record.
stage_scope() {
  PYTHONPATH="$REPO_ROOT/lib" python3 - "$PROJECT" "$@" <<'PY'
import sys
from pathlib import Path
from okstra.model import active_run
root = Path(sys.argv[1])
run = active_run.load(root)
staged = run.evolve(task_type="implementation", stage=active_run.ApprovedStage(1, "Stage one", tuple(sys.argv[2:]), None))
active_run.write_file(root, staged.to_dict())  # with its seal, as okstra writes it
PY
}

# guard_edit PATH: the write-guard's answer to the lead's Edit of PATH ("" = allowed).
guard_edit() {
  python3 - "$REPO_ROOT/tests/fixtures/hooks/pretooluse-edit.json" "$1" "$PROJECT" <<'PY' |
import json, sys
doc = json.load(open(sys.argv[1]))
doc["cwd"] = sys.argv[3]
doc["tool_input"]["file_path"] = sys.argv[2]
print(json.dumps(doc))
PY
    CLAUDE_PROJECT_DIR="$PROJECT" "$REPO_ROOT/hooks/write-guard"
}

# reminder: what the compact reminder hook tells the lead after a compaction.
reminder() {
  echo '{"hook_event_name": "SessionStart", "source": "compact"}' | CLAUDE_PROJECT_DIR="$PROJECT" "$REPO_ROOT/hooks/compact-reminder"
}
