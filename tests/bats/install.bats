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
