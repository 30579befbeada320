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
  # The run ended at teardown, and every prompt carried the brief.
  [ ! -e .okstra/active-run.json ]
  grep -q "Review src/greet.py" .okstra/runs/demo--greeting--r001/prompts/claude.md
  grep -q "Review src/greet.py" .okstra/runs/demo--greeting--r001/prompts/claude.attempt-2.md
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

@test "Ctrl-C during the demo tears its run down and leaves nothing running" {
  # A real SIGINT to the demo's process group, as a terminal's Ctrl-C sends it, while
  # worker-wait waits on a claude worker that hangs.
  run python3 - "$REPO_ROOT/demo/run" "$OKSTRA_DEMO_DIR" <<'PY'
import os, signal, subprocess, sys, time, json, glob
demo, work = sys.argv[1], sys.argv[2]
env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
env["OKSTRA_FAKE_MODE_CLAUDE"] = "hang"
child = subprocess.Popen([demo], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
deadline = time.monotonic() + 240
def running():
    for path in glob.glob(f"{work}/project/.okstra/runs/*/team-state.json"):
        try:
            state = json.load(open(path))
        except ValueError:
            continue
        if any(d["workerId"] == "claude" and d["status"] == "in-progress" and d.get("pid") for d in state["workerDispatches"]):
            return path
while not (state := running()):
    assert time.monotonic() < deadline and child.poll() is None, "the demo never got its claude worker running"
    time.sleep(0.2)
time.sleep(1)
os.killpg(child.pid, signal.SIGINT)
err = child.communicate(timeout=120)[1].decode()
print("exit", child.returncode)
print("torn down" if "tearing the run down" in err else err[-2000:])
statuses = {d["workerId"]: d["status"] for d in json.load(open(state))["workerDispatches"]}
print(sorted(statuses.items()))
PY
  assert_success
  assert_line --index 0 "exit 130"
  assert_line --index 1 "torn down"
  refute_line --partial "in-progress"
  run pgrep -f "$OKSTRA_DEMO_DIR"
  assert_failure 1
}
