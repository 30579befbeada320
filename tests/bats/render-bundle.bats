#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $stderr and $stderr_lines

load test_helper

setup() { okstra_setup; }

# The value of one top-level key of the JSON document on stdin.
json_get() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

@test "prepares an analysis run and prints its paths as JSON" {
  run --separate-stderr render-bundle --task-key feature/demo --task-type analysis --workers claude,codex --json
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
  run --separate-stderr render-bundle --task-key feature/demo --task-type implementation --workers claude,codex --executor grok
  assert_failure 2
  [ "$stderr" = "render-bundle: --executor grok: the executor 'grok' is not in the roster (claude, codex, from --workers); add it with --workers claude,codex,grok" ]
  [ "$(tree_snapshot .okstra)" = "$before" ]
}

@test "refuses one worker on two models, naming both roles and both models, and writes nothing" {
  before=$(tree_snapshot .okstra)
  run --separate-stderr render-bundle --task-key feature/demo --task-type implementation --workers claude,codex \
    --executor claude --role-model verifier=claude/claude-opus-4-1
  assert_failure 2
  [[ "$stderr" == "render-bundle: worker claude would carry two models: implementer on claude-sonnet-4-5"* ]]
  [[ "$stderr" == *"verifier on claude-opus-4-1"* ]]
  [[ "$stderr" == *"--role-model implementer=claude/claude-opus-4-1"* ]]
  [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
  [ "$(tree_snapshot .okstra)" = "$before" ]
}

@test "refuses an unknown provider or model listing the known ones" {
  run --separate-stderr render-bundle --task-key feature/demo --task-type analysis --workers claude,nope
  assert_failure 2
  [ "$stderr" = "render-bundle: --workers: unknown provider 'nope'; known providers: claude, codex, antigravity, grok, kimi" ]
  run --separate-stderr render-bundle --task-key feature/demo --task-type analysis --role-model analyst=codex/gpt-9
  assert_failure 2
  [ "$stderr" = "render-bundle: --role-model analyst=codex/gpt-9: provider 'codex' has no model id 'gpt-9'; known models of codex: gpt-5-codex, gpt-5" ]
  [ ! -e .okstra ]
}

@test "prints the run id and paths as lines without --json" {
  run --separate-stderr render-bundle --task-key feature/demo --task-type verification --workers codex
  assert_success
  assert_line "runId: feature--demo--r001"
  assert_line "runManifestPath: .okstra/runs/feature--demo--r001/run-manifest.json"
  assert_line "teamStatePath: .okstra/runs/feature--demo--r001/team-state.json"
}

@test "run numbers advance while the free report number is reused" {
  render-bundle --task-key feature/demo --task-type analysis --workers claude >/dev/null
  run --separate-stderr render-bundle --task-key feature/demo --task-type analysis --workers claude --json
  assert_success
  [ "$(json_get runNumber <<<"$output")" = "2" ]
  [ "$(json_get reportNumber <<<"$output")" = "1" ]
}

@test "takes the roster from the project config and the environment over it" {
  okstra config set default-workers grok >/dev/null
  run --separate-stderr render-bundle --task-key feature/demo --task-type analysis --json
  assert_success
  [ -f .okstra/runs/feature--demo--r001/prompts/grok.md ]
  OKSTRA_DEFAULT_WORKERS=kimi run --separate-stderr render-bundle --task-key feature/demo --task-type analysis --json
  assert_success
  [ -f .okstra/runs/feature--demo--r002/prompts/kimi.md ]
}

@test "records the lead pane from TMUX_PANE with the tmux-pane backend" {
  TMUX_PANE=%7 run --separate-stderr render-bundle --task-key feature/demo --task-type analysis --workers claude --backend tmux-pane
  assert_success
  grep -q '"leadPaneId": "%7"' .okstra/runs/feature--demo--r001/run-manifest.json
  grep -q '"terminalBackend": "tmux-pane"' .okstra/runs/feature--demo--r001/run-manifest.json
}

@test "refuses --stage without the approved plan, writing nothing" {
  run --separate-stderr render-bundle --task-key feature/demo --task-type implementation --stage 1
  assert_failure 2
  [[ "$stderr" == "render-bundle: --stage needs --plan PLAN; name the approved implementation plan report (its .md)" ]]
  [ ! -e .okstra ]
}

@test "hostile arguments exit 2 with one line and write nothing" {
  mkdir -p .okstra && echo keep >.okstra/marker
  before=$(tree_snapshot .okstra)
  local args
  for args in \
    "--task-key ../../etc --task-type analysis" \
    "--task-key feature/../x --task-type analysis" \
    "--task-key /abs/path --task-type analysis" \
    "--task-key feature/demo --task-type nope" \
    "--task-key feature/demo --task-type analysis --workers claude,claude" \
    "--task-key feature/demo --task-type analysis --workers ,"\
    "--task-key feature/demo --task-type analysis --role-model nope" \
    "--task-key feature/demo --task-type analysis --role-model boss=claude/claude-opus-4-1" \
    "--task-key feature/demo --task-type analysis --backend screen" \
    "--task-key feature/demo --task-type analysis --lead-pane ;rm" \
    "--task-key feature/demo --task-type analysis --report-language ../../x" \
    "--task-key feature/demo --task-type analysis --stage -1" \
    "--task-key feature/demo --task-type analysis --project-root /nonexistent"; do
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
  run --separate-stderr render-bundle --task-key feature/demo --task-type analysis
  assert_failure 2
  [[ "$stderr" == "render-bundle: $PROJECT/.okstra/config.yaml: not valid YAML at line "* ]]
  [ "$(tree_snapshot .okstra)" = "$before" ]
}

@test "the first run keeps .okstra/ out of git through .git/info/exclude and says so once" {
  run --separate-stderr render-bundle --task-key feature/demo --task-type analysis --workers claude
  assert_success
  [ "$stderr" = "render-bundle: added .okstra/ to $PROJECT/.git/info/exclude: git leaves okstra's run files alone" ]
  grep -qx '.okstra/' "$PROJECT/.git/info/exclude"
  [ ! -e "$PROJECT/.gitignore" ]
  run git -C "$PROJECT" status --porcelain --untracked-files=all
  assert_output ""
  run --separate-stderr render-bundle --task-key feature/demo --task-type analysis --workers claude
  assert_success
  [ "$stderr" = "" ]
  [ "$(grep -cx '.okstra/' "$PROJECT/.git/info/exclude")" -eq 1 ]
}

@test "--gitignore puts .okstra/ in the project's .gitignore instead, keeping its lines" {
  printf 'node_modules/' > "$PROJECT/.gitignore"
  run --separate-stderr render-bundle --task-key feature/demo --task-type analysis --workers claude --gitignore
  assert_success
  [ "$stderr" = "render-bundle: added .okstra/ to $PROJECT/.gitignore: git leaves okstra's run files alone" ]
  [ "$(cat "$PROJECT/.gitignore")" = "$(printf 'node_modules/\n.okstra/')" ]
  run grep -c okstra "$PROJECT/.git/info/exclude"
  assert_output "0"
}

@test "a project whose .gitignore already ignores .okstra/ is left as it is" {
  printf '.okstra/\n' > "$PROJECT/.gitignore"
  exclude_before=$(cat "$PROJECT/.git/info/exclude")
  run --separate-stderr render-bundle --task-key feature/demo --task-type analysis --workers claude
  assert_success
  [ "$stderr" = "" ]
  [ "$(cat "$PROJECT/.git/info/exclude")" = "$exclude_before" ]
}
