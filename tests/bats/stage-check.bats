#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $stderr

load test_helper
load scope_helper

setup() {
  okstra_setup
  export PATH="$REPO_ROOT/tests/fakes:$PATH"
  git_project
  approved_plan
}


@test "names the unplanned file a codex implementer wrote and the planned file it deleted, and exits 1" {
  stage_run --replace-active
  OKSTRA_FAKE_EDITS="write:notes/unplanned.txt;delete:api/limiter/core.py" team-dispatch >/dev/null 2>&1
  wait_workers
  run --separate-stderr stage-check
  assert_failure 1
  assert_line "project: 2 changed since $(git rev-parse HEAD | cut -c1-12), 1 out of scope"
  assert_line "  OUT ? notes/unplanned.txt  by codex  (outside stage 1's planned paths)"
  assert_line "  ok  D api/limiter/core.py  by codex"
  [ "$stderr" = "stage-check: 1 path(s) out of the approved scope: notes/unplanned.txt" ]
  run --separate-stderr stage-check --json
  assert_failure 1
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); t=d["trees"][0]; assert d["verdict"]=="out-of-scope"; assert [(p["path"],p["status"],p["worker"]) for p in t["outOfScope"]]==[("notes/unplanned.txt","?","codex")], t' "$output"
}

@test "records the scope verdict on the implementer's dispatch when its run ends" {
  stage_run --replace-active
  OKSTRA_FAKE_EDITS="write:api/limiter/new.py;write:docs/notes.md" team-dispatch >/dev/null 2>&1
  wait_workers
  python3 - "$STAGE_RUN_DIR/team-state.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["workerDispatches"][0]
assert d["scopeCheck"]["verdict"] == "out-of-scope", d
assert d["scopeCheck"]["outOfScope"] == ["docs/notes.md"], d
PY
}

@test "passes when every change is planned, renames and commits included" {
  stage_run --replace-active
  git mv api/limiter/core.py api/limiter/take.py
  git commit -q -m "rename inside the plan"
  mkdir -p tests/limiter && printf 'x\n' > tests/limiter/test_take.py
  run stage-check
  assert_success
  assert_line "  ok  R api/limiter/core.py -> api/limiter/take.py  by unknown writer"
  assert_line "  ok  ? tests/limiter/test_take.py  by unknown writer"
}

@test "a rename out of the plan is out of scope, and .okstra/ is never counted" {
  stage_run --replace-active
  git mv api/limiter/shared.py lib_shared.py
  mkdir -p .okstra/scratch && printf 'x\n' > .okstra/scratch/note
  run stage-check
  assert_failure 1
  assert_line --partial "OUT R api/limiter/shared.py -> lib_shared.py"
  refute_output --partial ".okstra/scratch"
}

@test "refuses a run without an approved stage, and a bad --base, with exit 2 and one line" {
  render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude >/dev/null
  run --separate-stderr stage-check
  assert_failure 2
  [ "$stderr" = "stage-check: run feature--demo--r001 has no approved stage; stage-check checks an implementation stage (render-bundle --stage N --plan PLAN)" ]
  stage_run --replace-active
  run --separate-stderr stage-check --base 'HEAD; rm -rf /'
  assert_failure 2
  [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
  run --separate-stderr stage-check --base --output=x
  assert_failure 2
}

@test "stage-record done is refused while stage-check fails, and a user's scope waiver lets it through" {
  stage_run --replace-active
  OKSTRA_FAKE_EDITS="write:notes/unplanned.txt;delete:api/limiter/core.py" team-dispatch >/dev/null 2>&1
  wait_workers
  git add -A && git commit -q -m "stage 1"
  local before
  before="$(tree_snapshot "$PROJECT/.okstra")"
  run --separate-stderr stage-record --task-key feature/rate-limit --stage 1 --status "done" --head-commit "$(git rev-parse HEAD)"
  assert_failure 2
  [[ "$stderr" == "stage-record: stage 1 of feature/rate-limit is not recorded done: stage-check finds 1 path(s) out of its approved scope: notes/unplanned.txt; "* ]]
  [ "$(tree_snapshot "$PROJECT/.okstra")" = "$before" ]
  # The waiver is the user's: from inside the lead's Claude Code session it is refused.
  CLAUDECODE=1 run --separate-stderr user-response-write --report "$PLAN" --answers '{}' \
    --scope-waiver '{"stage": 1, "paths": ["notes/unplanned.txt"], "reason": "keep the notes"}'
  assert_failure 2
  [[ "$stderr" == *"SCOPE WAIVER is the user's decision"* ]]
  user-response-write --report "$PLAN" --answers '{}' \
    --scope-waiver '{"stage": 1, "paths": ["notes/unplanned.txt"], "reason": "keep the notes"}' >/dev/null
  grep -q '^## SCOPE WAIVER$' "$(dirname "$PLAN")/user-responses/user-response-implementation-planning-001.md"
  run --separate-stderr stage-record --task-key feature/rate-limit --stage 1 --status "done" --head-commit "$(git rev-parse HEAD)"
  assert_success
}
