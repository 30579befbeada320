#!/usr/bin/env bats
# make demo (DESIGN §12) in cli-wrapper mode: every artefact it prints exists and validates.

# shellcheck disable=SC2154  # bats sets $stderr
load test_helper

setup() {
  okstra_setup
  export OKSTRA_DEMO_DIR="$BATS_TEST_TMPDIR/demo"
}

@test "the demo runs end to end and every artefact it names exists and validates" {
  run --separate-stderr env -u TMUX -u TMUX_PANE "$REPO_ROOT/demo/run"
  assert_success
  [ "${#lines[@]}" -eq 3 ]
  report=${lines[0]#report:  }
  html=${lines[1]#html:    }
  sidecar=${lines[2]#sidecar: }
  [ -s "$report" ] && [ -s "$html" ] && [ -s "$sidecar" ]
  cd "$OKSTRA_DEMO_DIR/project"
  export OKSTRA_ROOT="$OKSTRA_DEMO_DIR/okstra"
  bin="$OKSTRA_DEMO_DIR/okstra/bin"
  run "$bin/render-final-report" --no-snapshot "${report%.md}.data.json"
  assert_success
  grep -q 'id="okstra-meta"' "$html"
  grep -q "$(sha256sum "${report%.md}.data.json" | cut -d' ' -f1)" "$html"
  run "$bin/user-response-show" --report "$report" --json
  assert_success
  assert_output --partial '"unanswered": []'
  run "$bin/team-status" --run-manifest .okstra/runs/demo--greeting--r001/run-manifest.json --json
  assert_success
  refute_output --partial '"in-progress"'
  grep -q '"finalStatus": "completed"' .okstra/runs/demo--greeting--r001/run-manifest.json
  # okstra's run files stay out of git: nothing under .okstra/ is untracked or staged.
  run git status --porcelain --untracked-files=all
  assert_success
  refute_output --partial ".okstra"
}

@test "the demo leaves no worker process behind" {
  env -u TMUX -u TMUX_PANE "$REPO_ROOT/demo/run" >/dev/null 2>&1
  run pgrep -f "$OKSTRA_DEMO_DIR"
  assert_failure 1
}
