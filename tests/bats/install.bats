#!/usr/bin/env bats
# install.sh: a private venv, bin/ pointing at it, the same bin/ <-> lib/ shape,
# idempotent, and an uninstall that leaves nothing behind.

load test_helper

setup() {
  okstra_setup
  PREFIX="$BATS_TEST_TMPDIR/prefix"
}

@test "installs every command with the venv's interpreter and each answers --help" {
  run "$REPO_ROOT/install.sh" --prefix "$PREFIX"
  assert_success
  assert_output "Installed okstra to $PREFIX (run $PREFIX/bin/okstra help)"
  for cmd in "$REPO_ROOT"/bin/*; do
    name=$(basename "$cmd")
    [ -x "$PREFIX/bin/$name" ]
    [ "$(head -n 1 "$PREFIX/bin/$name")" = "#!$PREFIX/venv/bin/python" ]
    run env -i HOME="$HOME" PATH=/usr/bin:/bin "$PREFIX/bin/$name" --help
    assert_success
  done
}

@test "an installed command works through a symlink" {
  "$REPO_ROOT/install.sh" --prefix "$PREFIX" >/dev/null
  mkdir -p "$HOME/.local/bin"
  ln -s "$PREFIX/bin/okstra" "$HOME/.local/bin/okstra"
  run env -i HOME="$HOME" PATH=/usr/bin:/bin "$HOME/.local/bin/okstra" help
  assert_success
  assert_line --partial "Commands:"
}

@test "re-running upgrades in place and changes nothing else" {
  "$REPO_ROOT/install.sh" --prefix "$PREFIX" >/dev/null
  first=$(cd "$PREFIX" && find . -path ./venv -prune -o -type f -print | sort | xargs sha256sum)
  run "$REPO_ROOT/install.sh" --prefix "$PREFIX"
  assert_success
  second=$(cd "$PREFIX" && find . -path ./venv -prune -o -type f -print | sort | xargs sha256sum)
  [ "$first" = "$second" ]
}

@test "uninstall leaves nothing behind but the user's own files" {
  "$REPO_ROOT/install.sh" --prefix "$PREFIX" >/dev/null
  printf 'backend: tmux-pane\n' > "$PREFIX/config.yaml"
  run "$REPO_ROOT/install.sh" --prefix "$PREFIX" --uninstall
  assert_success
  assert_output "Uninstalled okstra from $PREFIX"
  run find "$PREFIX" -mindepth 1
  assert_output "$PREFIX/config.yaml"
}

@test "uninstall of an empty prefix removes the prefix" {
  "$REPO_ROOT/install.sh" --prefix "$PREFIX" >/dev/null
  "$REPO_ROOT/install.sh" --prefix "$PREFIX" --uninstall >/dev/null
  [ ! -e "$PREFIX" ]
}

@test "an unknown argument exits 2 with one line" {
  run --separate-stderr "$REPO_ROOT/install.sh" --nope
  assert_failure 2
  [ "$stderr" = "install.sh: unknown argument '--nope'; see 'install.sh --help'" ]
}

@test "uninstall where nothing is installed exits 2" {
  run --separate-stderr "$REPO_ROOT/install.sh" --prefix "$PREFIX" --uninstall
  assert_failure 2
  [[ "$stderr" == "install.sh: nothing installed at $PREFIX"* ]]
}

@test "--with-skill links the okstra-run skill where Claude Code finds it, and uninstall unlinks it" {
  run "$REPO_ROOT/install.sh" --prefix "$PREFIX" --with-skill
  assert_success
  link="$HOME/.claude/skills/okstra-run"
  [ -L "$link" ]
  [ "$(readlink "$link")" = "$PREFIX/skills/okstra-run" ]
  head -n 2 "$link/SKILL.md" | grep -qx "name: okstra-run"
  [ -x "$PREFIX/hooks/write-guard" ] && [ -f "$PREFIX/hooks/write-guard.py" ]
  run "$REPO_ROOT/install.sh" --prefix "$PREFIX" --uninstall
  assert_success
  [ ! -e "$link" ] && [ ! -L "$link" ]
}

@test "uninstall leaves a skill link that is not okstra's alone" {
  "$REPO_ROOT/install.sh" --prefix "$PREFIX" >/dev/null
  mkdir -p "$HOME/.claude/skills" "$HOME/my-skill"
  ln -s "$HOME/my-skill" "$HOME/.claude/skills/okstra-run"
  "$REPO_ROOT/install.sh" --prefix "$PREFIX" --uninstall >/dev/null
  [ "$(readlink "$HOME/.claude/skills/okstra-run")" = "$HOME/my-skill" ]
}

@test "uninstall after the hooks ran (and cached bytecode) still leaves nothing" {
  "$REPO_ROOT/install.sh" --prefix "$PREFIX" >/dev/null
  mkdir -p "$PROJECT/.okstra"
  printf '{"runId":"a--b--r001","taskKey":"a/b","taskType":"analysis","runDir":".okstra/runs/a--b--r001","runManifestPath":".okstra/runs/a--b--r001/run-manifest.json","phase":"analysis","approvedStage":null}\n' > "$PROJECT/.okstra/active-run.json"
  CLAUDE_PROJECT_DIR="$PROJECT" "$PREFIX/hooks/write-guard" <<<'{"cwd":"/","tool_name":"Write","tool_input":{"file_path":"/tmp/x"}}' >/dev/null
  [ -n "$(find "$PREFIX/lib" -name '*.pyc' | head -n 1)" ]
  "$REPO_ROOT/install.sh" --prefix "$PREFIX" --uninstall >/dev/null
  [ ! -e "$PREFIX" ]
}
