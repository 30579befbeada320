#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $stderr and $stderr_lines

load test_helper

setup() { okstra_setup; }

@test "set writes the project file and get shows the value and its source" {
  run --separate-stderr okstra config set default-workers claude,codex
  assert_success
  grep -qx 'default-workers: claude,codex' .okstra/config.yaml
  run --separate-stderr okstra config get default-workers
  assert_success
  [ "$output" = "claude,codex (from project $PROJECT/.okstra/config.yaml)" ]
}

@test "the project overrides the global file and the environment overrides both" {
  okstra config set backend tmux-pane --scope global >/dev/null
  run okstra config get backend
  [ "$output" = "tmux-pane (from global $OKSTRA_ROOT/config.yaml)" ]
  okstra config set backend cmux-pane >/dev/null
  run okstra config get backend
  [ "$output" = "cmux-pane (from project $PROJECT/.okstra/config.yaml)" ]
  OKSTRA_DEFAULT_BACKEND=cli-wrapper run okstra config get backend --json
  assert_success
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d == {"key": "backend", "value": "cli-wrapper", "source": "env OKSTRA_DEFAULT_BACKEND"}, d' "$output"
}

@test "YAML 1.1 coercions do not bite: report-language no stays the string no" {
  okstra config set report-language no >/dev/null
  run okstra config get report-language --json
  python3 -c 'import json,sys; assert json.loads(sys.argv[1])["value"] == "no"' "$output"
  printf 'report-language: no\n' >.okstra/config.yaml
  run okstra config get report-language
  [ "$output" = "no (from project $PROJECT/.okstra/config.yaml)" ]
}

@test "get of an unset key exits 1" {
  run --separate-stderr okstra config get pr-template-path
  assert_failure 1
  [ "$stderr" = "okstra-config: pr-template-path is not set" ]
}

@test "list shows every effective value with its source" {
  okstra config set default-executor codex --scope global >/dev/null
  run --separate-stderr okstra config list
  assert_success
  assert_line "default-executor = codex (from global $OKSTRA_ROOT/config.yaml)"
  assert_line "backend = cli-wrapper (from default)"
}

@test "unset removes a key from one file" {
  okstra config set default-executor codex >/dev/null
  run okstra config unset default-executor
  assert_success
  run okstra config get default-executor
  assert_failure 1
}

@test "an unknown key or a bad value exits 2 naming the allowed ones, nothing written" {
  okstra config set backend tmux-pane >/dev/null
  before=$(tree_snapshot .okstra)
  run --separate-stderr okstra config set colour blue
  assert_failure 2
  [[ "$stderr" == "okstra-config: config set: unknown config key 'colour'; known keys: default-workers, "* ]]
  run --separate-stderr okstra config set backend screen
  assert_failure 2
  [ "$stderr" = "okstra-config: value of backend: backend 'screen' is not a backend; allowed: cli-wrapper, tmux-pane, cmux-pane" ]
  run --separate-stderr okstra config set default-executor nope
  assert_failure 2
  [[ "$stderr" == "okstra-config: value of default-executor: unknown provider 'nope'; known providers: "* ]]
  [ "$(tree_snapshot .okstra)" = "$before" ]
}

@test "hostile keys, values and paths exit 2 with one line and write nothing" {
  okstra config set backend tmux-pane >/dev/null
  before=$(tree_snapshot .okstra)
  global_before=$(tree_snapshot "$OKSTRA_ROOT")
  local args
  for args in \
    "set ../../etc/passwd x" \
    "get __proto__" \
    "set pr-template-path /etc/passwd" \
    "set pr-template-path ../outside.md" \
    "set default-workers claude,,codex" \
    "set default-workers claude,claude" \
    "set report-language ../x" \
    "set providers {}" \
    "set backend" \
    "frobnicate backend" \
    "get backend --scope nowhere" \
    "set backend cli-wrapper --project-root /nonexistent"; do
    # shellcheck disable=SC2086
    run --separate-stderr okstra-config $args
    assert_failure 2
    [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
    [[ "$stderr" == "okstra-config: "* ]]
  done
  [ "$(tree_snapshot .okstra)" = "$before" ]
  [ "$(tree_snapshot "$OKSTRA_ROOT")" = "$global_before" ]
}

@test "a malformed config file is named with its line" {
  mkdir -p .okstra && printf 'backend: tmux-pane\n  bad: [\n' >.okstra/config.yaml
  run --separate-stderr okstra config get backend
  assert_failure 2
  [[ "$stderr" == "okstra-config: $PROJECT/.okstra/config.yaml: not valid YAML at line 2"* ]]
}

@test "a python tag in a config file is refused, not run" {
  mkdir -p .okstra && printf 'backend: !!python/object/apply:os.system ["touch pwned"]\n' >.okstra/config.yaml
  run --separate-stderr okstra config get backend
  assert_failure 2
  [ ! -e pwned ]
}
