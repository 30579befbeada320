#!/usr/bin/env bats

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
