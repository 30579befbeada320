#!/usr/bin/env bats
# shellcheck disable=SC2154,SC2030,SC2031  # bats sets $stderr and $stderr_lines; each test sets its own PATH

load test_helper
load scope_helper

setup() { okstra_setup; }

# The value of one top-level key of the JSON document on stdin.
json_get() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

@test "prepares an analysis run and prints its paths as JSON" {
  run --separate-stderr render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude,codex --json
  assert_success
  [ "$(json_get runId <<<"$output")" = "feature--demo--r001" ]
  [ "$(json_get runManifestPath <<<"$output")" = ".okstra/runs/feature--demo--r001/run-manifest.json" ]
  [ -f .okstra/runs/feature--demo--r001/team-state.json ]
  [ -f .okstra/runs/feature--demo--r001/prompts/claude.md ]
  [ -f .okstra/runs/feature--demo--r001/prompts/codex.md ]
  [ -f .okstra/active-run.json ]
}

@test "refuses an executor outside the roster, naming the flag to add, and writes nothing" {
  before=$(tree_snapshot .okstra)
  run --separate-stderr render-bundle --brief "a test task" --task-key feature/demo --task-type implementation --workers claude,codex --executor grok
  assert_failure 2
  [ "$stderr" = "render-bundle: --executor grok: the executor 'grok' is not in the roster (claude, codex, from --workers); add it with --workers claude,codex,grok" ]
  [ "$(tree_snapshot .okstra)" = "$before" ]
}

@test "refuses one worker on two models, naming both roles and both models, and writes nothing" {
  before=$(tree_snapshot .okstra)
  run --separate-stderr render-bundle --brief "a test task" --task-key feature/demo --task-type implementation --workers claude,codex \
    --executor claude --role-model verifier=claude/claude-opus-4-1
  assert_failure 2
  [[ "$stderr" == "render-bundle: worker claude would carry two models: implementer on claude-sonnet-4-5"* ]]
  [[ "$stderr" == *"verifier on claude-opus-4-1"* ]]
  [[ "$stderr" == *"--role-model implementer=claude/claude-opus-4-1"* ]]
  [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
  [ "$(tree_snapshot .okstra)" = "$before" ]
}

@test "refuses an unknown provider or model listing the known ones" {
  run --separate-stderr render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude,nope
  assert_failure 2
  [ "$stderr" = "render-bundle: --workers: unknown provider 'nope'; known providers: claude, codex, antigravity, grok, kimi" ]
  run --separate-stderr render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --role-model analyst=codex/gpt-9
  assert_failure 2
  [ "$stderr" = "render-bundle: --role-model analyst=codex/gpt-9: provider 'codex' has no model id 'gpt-9'; known models of codex: gpt-5-codex, gpt-5" ]
  [ ! -e .okstra ]
}

@test "prints the run id and paths as lines without --json" {
  run --separate-stderr render-bundle --brief "a test task" --task-key feature/demo --task-type verification --workers codex
  assert_success
  assert_line "runId: feature--demo--r001"
  assert_line "runManifestPath: .okstra/runs/feature--demo--r001/run-manifest.json"
  assert_line "teamStatePath: .okstra/runs/feature--demo--r001/team-state.json"
}

@test "run numbers advance while the free report number is reused" {
  render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude >/dev/null
  run --separate-stderr render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude --replace-active --json
  assert_success
  [ "$(json_get runNumber <<<"$output")" = "2" ]
  [ "$(json_get reportNumber <<<"$output")" = "1" ]
}

@test "takes the roster from the project config and the environment over it" {
  okstra config set default-workers grok >/dev/null
  run --separate-stderr render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --json
  assert_success
  [ -f .okstra/runs/feature--demo--r001/prompts/grok.md ]
  OKSTRA_DEFAULT_WORKERS=kimi run --separate-stderr render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --replace-active --json
  assert_success
  [ -f .okstra/runs/feature--demo--r002/prompts/kimi.md ]
}

# A private tmux server for this test (OKSTRA_TMUX_SOCKET), its lead pane in $lead.
private_tmux() {
  export OKSTRA_TMUX_SOCKET="$BATS_TEST_TMPDIR/tmux.sock"
  tmux -S "$OKSTRA_TMUX_SOCKET" -f /dev/null new-session -d -x 200 -y 50 -s lead
  lead=$(tmux -S "$OKSTRA_TMUX_SOCKET" display-message -p -t lead: '#{pane_id}')
}

teardown() {
  run-end --grace 1 >/dev/null 2>&1 || true  # a test that failed midway leaves no worker running
  if [ -n "${OKSTRA_TMUX_SOCKET:-}" ]; then tmux -S "$OKSTRA_TMUX_SOCKET" kill-server 2>/dev/null || true; fi
}

@test "records the lead pane from TMUX_PANE with the tmux-pane backend" {
  private_tmux
  TMUX_PANE=$lead run --separate-stderr render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude --backend tmux-pane
  assert_success
  grep -q "\"leadPaneId\": \"$lead\"" .okstra/runs/feature--demo--r001/run-manifest.json
  grep -q '"terminalBackend": "tmux-pane"' .okstra/runs/feature--demo--r001/run-manifest.json
}

@test "the brief reaches every prompt; a run without one is refused, nothing written (issue 11 #1)" {
  run --separate-stderr render-bundle --task-key feature/demo --task-type analysis --workers claude,codex
  assert_failure 2
  [[ "$stderr" == "render-bundle: a analysis run needs the task: --brief TEXT or --brief-file PATH (- for stdin)"* ]]
  [ ! -e .okstra ]
  printf 'Make greet() handle names with spaces.\nAcceptance: the tests pass.\n' >request.md
  render-bundle --task-key feature/demo --task-type analysis --workers claude,codex --brief-file request.md >/dev/null
  grep -q "Make greet() handle names with spaces." .okstra/runs/feature--demo--r001/prompts/claude.md
  grep -q "Make greet() handle names with spaces." .okstra/runs/feature--demo--r001/prompts/codex.md
  [ "$(grep -c "in the conversation that dispatched you" .okstra/runs/feature--demo--r001/prompts/claude.md)" -eq 0 ]
}

@test "a second run while the first has unfinished workers is refused naming the ways on (issue 11 #3)" {
  export PATH="$REPO_ROOT/tests/fakes:$PATH"
  render-bundle --brief "first" --task-key t/cc1 --task-type analysis --workers claude --backend cli-wrapper >/dev/null
  OKSTRA_FAKE_MODE=hang team-dispatch >/dev/null 2>&1
  before=$(ls -A .okstra/runs)
  task_before=$(tree_snapshot .okstra/tasks)
  run --separate-stderr render-bundle --brief "second" --task-key t/cc2 --task-type analysis --workers claude --backend cli-wrapper
  assert_failure 1
  [[ "${stderr_lines[0]}" == "render-bundle: run t--cc1--r001 (task t/cc1, analysis) is still active with unfinished workers: claude "* ]]
  [[ "${stderr_lines[1]}" == *"team-teardown --run-manifest .okstra/runs/t--cc1--r001/run-manifest.json"*"run-end"*"--replace-active"* ]]
  grep -q '"runId": "t--cc1--r001"' .okstra/active-run.json
  [ "$(ls -A .okstra/runs)" = "$before" ]
  [ "$(tree_snapshot .okstra/tasks)" = "$task_before" ]
  run --separate-stderr render-bundle --brief "second" --task-key t/cc2 --task-type analysis --workers claude --backend cli-wrapper --replace-active
  assert_success
  grep -q '"runId": "t--cc2--r001"' .okstra/active-run.json
  grep -q '"phase": "ended"' .okstra/runs/t--cc1--r001/run-manifest.json
  [[ "$(python3 -c 'import json; print(json.load(open(".okstra/runs/t--cc1--r001/team-state.json"))["workerDispatches"][0]["status"])')" == error ]]
  run-end >/dev/null 2>&1
}

@test "an executor joins the default roster; the default executor is claude (issue 11 #5)" {
  run --separate-stderr render-bundle --brief x --task-key feature/demo --task-type implementation --executor kimi --json
  assert_success
  [ -f .okstra/runs/feature--demo--r001/prompts/kimi.md ]
  grep -q '"role": "implementer"' .okstra/runs/feature--demo--r001/team-state.json
  python3 -c 'import json; d=json.load(open(".okstra/runs/feature--demo--r001/team-state.json")); assert [x["workerId"] for x in d["workerDispatches"] if x["role"]=="implementer"]==["kimi"], d'
  run --separate-stderr render-bundle --brief x --task-key feature/demo --task-type implementation --workers codex,claude --replace-active
  assert_success
  python3 -c 'import json; d=json.load(open(".okstra/runs/feature--demo--r002/team-state.json")); assert [x["workerId"] for x in d["workerDispatches"] if x["role"]=="implementer"]==["claude"], d'
}

@test "a translator pinned outside the roster gets its own worker and its round runs (issue 11 #5)" {
  export PATH="$REPO_ROOT/tests/fakes:$PATH"
  render-bundle --brief "a test task" --task-key demo/ko --task-type analysis --workers claude --backend cli-wrapper \
    --report-language ko --role-model translator=kimi/kimi-k2 >/dev/null
  M=.okstra/runs/demo--ko--r001/run-manifest.json
  mkdir -p .okstra/runs/demo--ko--r001/reports
  echo "# report" >.okstra/runs/demo--ko--r001/reports/final-report-analysis-001.md
  team-dispatch --run-manifest "$M" >/dev/null 2>&1
  worker-wait --run-manifest "$M" --timeout 60 >/dev/null
  run --separate-stderr round-prepare --run-manifest "$M" --role translator --json
  assert_success
  assert_output --partial '"workerId": "kimi"'
  team-dispatch --run-manifest "$M" --round translation >/dev/null 2>&1
  worker-wait --run-manifest "$M" --timeout 60 >/dev/null
  [ -s .okstra/runs/demo--ko--r001/reports/final-report-analysis-001.ko.md ]
  grep -q "a test task" .okstra/runs/demo--ko--r001/prompts/kimi.md
}

@test "the backend is panes inside tmux, processes outside; one that cannot work here is refused (issue 11 #6)" {
  private_tmux
  TMUX="$OKSTRA_TMUX_SOCKET,1,0" TMUX_PANE=$lead render-bundle --brief x --task-key feature/demo --task-type analysis --workers claude >/dev/null
  grep -q '"terminalBackend": "tmux-pane"' .okstra/runs/feature--demo--r001/run-manifest.json
  run-end >/dev/null 2>&1
  render-bundle --brief x --task-key feature/demo --task-type analysis --workers claude >/dev/null
  grep -q '"terminalBackend": "cli-wrapper"' .okstra/runs/feature--demo--r002/run-manifest.json
  run-end >/dev/null 2>&1
  before=$(tree_snapshot .okstra)
  run --separate-stderr render-bundle --brief x --task-key feature/demo --task-type analysis --workers claude --backend tmux-pane
  assert_failure 2
  [[ "$stderr" == "render-bundle: --backend tmux-pane needs the lead's pane: not inside tmux"* ]]
  run --separate-stderr render-bundle --brief x --task-key feature/demo --task-type analysis --workers claude --backend tmux-pane --lead-pane %99
  assert_failure 2
  [[ "$stderr" == "render-bundle: --backend tmux-pane cannot work here: the lead pane %99 is not on the tmux server"* ]]
  PATH="$(dirname "$(command -v python3)"):/usr/bin:/bin" run --separate-stderr "$REPO_ROOT/bin/render-bundle" --brief x --task-key feature/demo --task-type analysis --workers claude --backend cmux-pane
  assert_failure 2
  [[ "$stderr" == "render-bundle: --backend cmux-pane cannot work here: cmux is not installed here"* ]]
  [ "$(tree_snapshot .okstra)" = "$before" ]
  [ "$(python3 -c 'import json; print(json.load(open(".okstra/tasks/feature/demo/task.json"))["sequences"]["runs"])')" = 2 ]
}

@test "refuses --stage without the approved plan, writing nothing" {
  run --separate-stderr render-bundle --brief "a test task" --task-key feature/demo --task-type implementation --stage 1
  assert_failure 2
  [[ "$stderr" == "render-bundle: --stage needs --plan PLAN; name the approved implementation plan report (its .md)" ]]
  [ ! -e .okstra ]
}

@test "hostile arguments exit 2 with one line and write nothing" {
  mkdir -p .okstra && echo keep >.okstra/marker
  before=$(tree_snapshot .okstra)
  local args
  for args in \
    "--brief x --task-key ../../etc --task-type analysis" \
    "--brief x --task-key feature/../x --task-type analysis" \
    "--brief x --task-key /abs/path --task-type analysis" \
    "--brief x --task-key feature/demo --task-type nope" \
    "--brief x --task-key feature/demo --task-type analysis --workers claude,claude" \
    "--brief x --task-key feature/demo --task-type analysis --workers ,"\
    "--brief x --task-key feature/demo --task-type analysis --role-model nope" \
    "--brief x --task-key feature/demo --task-type analysis --role-model boss=claude/claude-opus-4-1" \
    "--brief x --task-key feature/demo --task-type analysis --backend screen" \
    "--brief x --task-key feature/demo --task-type analysis --lead-pane ;rm" \
    "--brief x --task-key feature/demo --task-type analysis --report-language ../../x" \
    "--brief x --task-key feature/demo --task-type analysis --stage -1" \
    "--brief x --task-key feature/demo --task-type analysis --project-root /nonexistent"; do
    # shellcheck disable=SC2086
    run --separate-stderr render-bundle $args
    assert_failure 2
    [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
    [[ "$stderr" == "render-bundle: "* ]]
    [[ "$stderr" != *Traceback* ]]
  done
  [ "$(tree_snapshot .okstra)" = "$before" ]
}

@test "a broken project config is named with its line, nothing written" {
  mkdir -p .okstra && printf 'default-workers: [claude\n' >.okstra/config.yaml
  before=$(tree_snapshot .okstra)
  run --separate-stderr render-bundle --brief "a test task" --task-key feature/demo --task-type analysis
  assert_failure 2
  [[ "$stderr" == "render-bundle: $PROJECT/.okstra/config.yaml: not valid YAML at line "* ]]
  [ "$(tree_snapshot .okstra)" = "$before" ]
}

@test "the first run keeps .okstra/ out of git through .git/info/exclude and says so once" {
  run --separate-stderr render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude
  assert_success
  [ "$stderr" = "render-bundle: added .okstra/ to $PROJECT/.git/info/exclude: git leaves okstra's run files alone" ]
  grep -qx '.okstra/' "$PROJECT/.git/info/exclude"
  [ ! -e "$PROJECT/.gitignore" ]
  run git -C "$PROJECT" status --porcelain --untracked-files=all
  assert_output ""
  run-end >/dev/null 2>&1
  run --separate-stderr render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude
  assert_success
  [ "$stderr" = "" ]
  [ "$(grep -cx '.okstra/' "$PROJECT/.git/info/exclude")" -eq 1 ]
}

@test "--gitignore puts .okstra/ in the project's .gitignore instead, keeping its lines" {
  printf 'node_modules/' > "$PROJECT/.gitignore"
  run --separate-stderr render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude --gitignore
  assert_success
  [ "$stderr" = "render-bundle: added .okstra/ to $PROJECT/.gitignore: git leaves okstra's run files alone" ]
  [ "$(cat "$PROJECT/.gitignore")" = "$(printf 'node_modules/\n.okstra/')" ]
  run grep -c okstra "$PROJECT/.git/info/exclude"
  assert_output "0"
}

@test "a project whose .gitignore already ignores .okstra/ is left as it is" {
  printf '.okstra/\n' > "$PROJECT/.gitignore"
  exclude_before=$(cat "$PROJECT/.git/info/exclude")
  run --separate-stderr render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude
  assert_success
  [ "$stderr" = "" ]
  [ "$(cat "$PROJECT/.git/info/exclude")" = "$exclude_before" ]
}

@test "refuses a stage whose plan changed after the user approved it, naming the plan, writing nothing" {
  git_project
  approved_plan
  python3 - "${PLAN%.md}.data.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["implementationPlanning"]["stageMap"][0]["plannedPaths"] = ["**"]
json.dump(d, open(sys.argv[1], "w"))
PY
  before=$(tree_snapshot "$PROJECT")
  run --separate-stderr render-bundle --task-key feature/rate-limit --task-type implementation --workers codex \
    --executor codex --stage 1 --plan "$PLAN"
  assert_failure 2
  [ "${#stderr_lines[@]}" -eq 1 ]
  [[ "$stderr" == "render-bundle: the plan '$PLAN' changed after approval: "*"; ask the user to review the plan and approve it again"* ]]
  [ "$(tree_snapshot "$PROJECT")" = "$before" ]
  user-response-write --report "$PLAN" --answers '{}' --plan-decision '{"status": "approved", "option": "A"}' >/dev/null
  stage_run
  grep -q '"\*\*"' .okstra/active-run.json
}
