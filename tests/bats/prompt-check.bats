#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $stderr and $stderr_lines

load test_helper

RUN=.okstra/runs/feature--demo--r001

setup() {
  okstra_setup
  render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude,codex >/dev/null
}

@test "a rendered prompt keeps the contract" {
  run --separate-stderr prompt-check "$RUN/prompts/codex.md" --run-manifest "$RUN/run-manifest.json" --worker codex
  assert_success
  [ -z "$stderr" ]
}

@test "a prompt naming another model fails with exit 1 naming the expected model" {
  sed 's/^\*\*Model:\*\* .*/**Model:** GPT-5, gpt-5/' "$RUN/prompts/codex.md" >edited.md
  run --separate-stderr prompt-check edited.md --run-manifest "$RUN/run-manifest.json" --worker codex
  assert_failure 1
  [ "$stderr" = "prompt-check: **Model:** names model 'gpt-5', but worker codex runs 'gpt-5-codex'; expected 'GPT-5 Codex, gpt-5-codex'" ]
}

@test "reports every problem at once, one per line" {
  grep -v '^\*\*Evidence Ledger:\*\*' "$RUN/prompts/claude.md" \
    | sed 's/^\*\*Task Type:\*\* .*/**Task Type:** implementation/' >edited.md
  printf '**Forbidden Actions:** again\n' >>edited.md
  run --separate-stderr prompt-check edited.md --run-manifest "$RUN/run-manifest.json" --worker claude
  assert_failure 1
  [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 3 ]
  [[ "$stderr" == *"missing header **Evidence Ledger:**"* ]]
  [[ "$stderr" == *"header **Forbidden Actions:** appears 2 times"* ]]
  [[ "$stderr" == *"**Task Type:** is 'implementation', expected 'analysis'"* ]]
}

@test "--json gives ok and the problems" {
  sed 's/^\*\*Model:\*\* .*/**Model:** Claude Opus 4.1, claude-opus-4-1/' "$RUN/prompts/claude.md" >edited.md
  run --separate-stderr prompt-check edited.md --run-manifest "$RUN/run-manifest.json" --worker claude --json
  assert_failure 1
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["ok"] is False and len(d["problems"]) == 1, d' "$output"
}

@test "hostile paths and ids exit 2 with one line and change nothing" {
  before=$(tree_snapshot .okstra)
  local args
  for args in \
    "/etc/passwd --run-manifest $RUN/run-manifest.json --worker codex" \
    "../outside.md --run-manifest $RUN/run-manifest.json --worker codex" \
    "$RUN/prompts/codex.md --run-manifest /etc/hosts --worker codex" \
    "$RUN/prompts/codex.md --run-manifest $RUN/team-state.json --worker codex" \
    "$RUN/prompts/codex.md --run-manifest $RUN/prompts/codex.md --worker codex" \
    "$RUN/prompts/codex.md --run-manifest $RUN/run-manifest.json --worker ../codex" \
    "$RUN/prompts/codex.md --run-manifest $RUN/run-manifest.json --worker grok" \
    "$RUN/missing.md --run-manifest $RUN/run-manifest.json --worker codex"; do
    # shellcheck disable=SC2086
    run --separate-stderr prompt-check $args
    assert_failure 2
    [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
    [[ "$stderr" == "prompt-check: "* ]]
  done
  [ "$(tree_snapshot .okstra)" = "$before" ]
}

@test "a manifest whose team state path escapes the project is refused" {
  python3 - "$RUN/run-manifest.json" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["teamStatePath"] = "../../etc/team-state.json"
json.dump(d, open(p, "w"))
PY
  run --separate-stderr prompt-check "$RUN/prompts/codex.md" --run-manifest "$RUN/run-manifest.json" --worker codex
  assert_failure 2
  [[ "$stderr" == "prompt-check: "*"run-manifest.json"* ]]
}
