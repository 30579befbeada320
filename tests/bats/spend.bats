#!/usr/bin/env bats
# Spend and failover: budgets refused with the numbers, team-status spent vs budget,
# a rate-limited worker's role failing over to the next provider (real tmux panes).
# shellcheck disable=SC2154,SC2016  # bats sets $stderr; single quotes keep the $ of amounts literal

load test_helper
load team_helper

setup() { team_setup; }
teardown() { team_teardown; }

@test "render-bundle refuses a budget smaller than the estimate, with the numbers, writing no run" {
  run --separate-stderr render-bundle --brief "a test task" --task-key feature/demo --task-type analysis --workers claude,codex --budget-usd 0.001
  assert_failure 2
  [[ "$stderr" =~ ^"render-bundle: the estimate for claude (render-bundle) is \$0."[0-9]+" ("[0-9,]+" input tokens): run feature--demo--r001 would reach \$0."[0-9]+", past its budget of \$0.0010 (render-bundle --budget-usd; \$0.0000 spent or committed before); raise the budget" ]]
  [ ! -e "$RUN_DIR" ]
  [ ! -e "$PROJECT/.okstra/active-run.json" ]
}

@test "team-dispatch refuses a round whose estimates would pass the budget from config, and starts nothing" {
  mkdir -p .okstra && printf 'budget-usd: "0.04"\n' > .okstra/config.yaml
  prepare_run tmux-pane claude
  team-dispatch >/dev/null 2>&1
  wait_status claude completed
  team-dispatch --redispatch claude >/dev/null 2>&1
  wait_status claude completed
  before=$(tree_snapshot "$PROJECT/.okstra")
  run --separate-stderr team-dispatch --redispatch claude
  assert_failure 2
  [[ "$stderr" == "team-dispatch: the estimate for claude attempt 3 (claude/claude-sonnet-4-5) is \$"*"input tokens): run feature--demo--r001 would reach \$"*", past its budget of \$0.0400 (budget-usd in project "*"; \$"*" spent or committed before); "* ]]
  [ "$(tree_snapshot "$PROJECT/.okstra")" = "$before" ]
  run team-status
  assert_success
  assert_line --regexp '^  claude +spent +\$0\.[0-9]{4}  committed +\$0\.[0-9]{4}$'
  assert_line --regexp '^  total +spent .* budget \$0\.0400 \(budget-usd in project .*\)$'
  team-status --json | python3 -c 'import json,sys; s=json.load(sys.stdin)["spend"]; assert s["budgetUsd"]==0.04 and s["spentUsd"]>0 and s["pricesAsOf"]=="2025-11-20", s'
}

@test "a rate-limited worker fails over to the next provider in its role's list and the breaker stays open" {
  mkdir -p .okstra && printf 'failover:\n  analyst: [codex, claude, antigravity]\n' > .okstra/config.yaml
  prepare_run tmux-pane codex
  OKSTRA_FAKE_MODE_CODEX=rate-limit team-dispatch >/dev/null 2>&1
  wait_status codex error
  [[ "$(field_of codex reason)" == "rate-limited: "* ]]
  OKSTRA_FAKE_MODE_CLAUDE=rate-limit run --separate-stderr team-dispatch --failover --json
  assert_success
  [[ "$stderr" == *"failover: claude-analyst attempt 1 (claude/claude-sonnet-4-5) stands in for codex attempt 1 (codex) as analyst: rate-limited: "* ]]
  [[ "$stderr" == *"failover: breaker open (skipped for the rest of the run): codex"* ]]
  wait_status claude-analyst error
  # claude hit a limit too: the next stand-in skips codex and claude (both breakers open).
  run --separate-stderr team-dispatch --failover --json
  assert_success
  [[ "$stderr" == *"failover: antigravity-analyst attempt 1 (antigravity/gemini-3-pro) stands in for claude-analyst attempt 1 (claude)"* ]]
  [[ "$stderr" == *"breaker open (skipped for the rest of the run): codex, claude"* ]]
  wait_status antigravity-analyst completed
  grep -q '^\*\*Model:\*\* Gemini 3 Pro, gemini-3-pro$' "$RUN_DIR/prompts/antigravity-analyst.md"
  python3 - "$RUN_DIR" <<'PY'
import json, sys
state = json.load(open(sys.argv[1] + "/team-state.json"))["workerDispatches"]
stand = [d for d in state if d["workerId"] == "antigravity-analyst"][0]
assert stand["failoverFrom"]["workerId"] == "claude-analyst" and stand["failoverFrom"]["reason"].startswith("rate-limited"), stand
manifest = json.load(open(sys.argv[1] + "/run-manifest.json"))
assert [p["workerId"] for p in manifest["participants"] if p["role"] == "analyst"] == ["codex", "claude-analyst", "antigravity-analyst"], manifest["participants"]
PY
  # team-status says the same: who stands in for whom, with the reason, and the open breakers.
  run team-status --all
  assert_success
  assert_line "failover: claude-analyst attempt 1 (claude/claude-sonnet-4-5) stands in for codex attempt 1 (codex) as analyst: $(field_of codex reason)"
  assert_line --regexp '^failover: antigravity-analyst attempt 1 \(antigravity/gemini-3-pro\) stands in for claude-analyst attempt 1 \(claude\) as analyst: rate-limited: .+'
  assert_line "failover: breaker open (skipped for the rest of the run): codex, claude"
  # Nothing left to fail over.
  run --separate-stderr team-dispatch --failover
  assert_success
  [[ "$stderr" == *"no rate-limited worker to fail over"* ]]
  team-teardown --grace 3 >/dev/null 2>&1
}

@test "the final report says who stood in for the rate-limited worker, with its reason, and which breakers are open" {
  mkdir -p .okstra && printf 'failover:\n  analyst: [codex, claude]\n' > .okstra/config.yaml
  prepare_run tmux-pane codex
  OKSTRA_FAKE_MODE_CODEX=rate-limit team-dispatch >/dev/null 2>&1
  wait_status codex error
  reason=$(field_of codex reason)
  [[ "$reason" == "rate-limited: "* ]]
  team-dispatch --failover >/dev/null 2>&1
  wait_status claude-analyst completed
  round-prepare --role report-writer >/dev/null 2>&1
  team-dispatch --round report >/dev/null 2>&1
  wait_status codex completed
  data=$(report-draft --owner "Demo User")
  run --separate-stderr render-final-report --no-snapshot "$data"
  assert_success
  md="$PROJECT/${data%.data.json}.md"
  grep -qxF -- "- **Stood in:** \`claude-analyst\` (Claude Code, analyst) stood in for \`codex\` attempt 1 (Codex), which hit a limit: $reason" "$md"
  grep -qxF -- "- **Breaker open** (failover skips these providers for the rest of the run): Codex" "$md"
  run --separate-stderr render-report-views "$data"
  assert_success
  html="$PROJECT/${data%.data.json}.html"
  python3 - "$html" "$reason" <<'PY'
import html, sys
text = html.unescape(open(sys.argv[1], encoding="utf-8").read())
line = ('<li class="stood-in"><strong>Stood in:</strong> <span class="mono">claude-analyst</span> (Claude Code, analyst) '
        'stood in for <span class="mono">codex</span> attempt 1 (Codex), which hit a limit: ' + sys.argv[2] + '</li>')
assert line in text, text[text.find('id="failover"') - 200 :][:1200]
assert "(failover skips these providers for the rest of the run): Codex</li>" in text
PY
  team-teardown --grace 3 >/dev/null 2>&1
}
