# Shared set-up for every bats file: `load test_helper` then `setup() { okstra_setup; }`.
# Each test gets its own OKSTRA_ROOT, HOME and project folder under
# $BATS_TEST_TMPDIR, a PATH with the repo's bin/ first, and no OKSTRA_* leaks.

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert

REPO_ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
export REPO_ROOT

# pip installs in tests (install.sh's venv, a pip-style install) come offline from the wheels
# tests/bootstrap.sh downloaded for this requirements.txt: the same pins, fetched once.
OKSTRA_TEST_WHEELS="$REPO_ROOT/build/wheels/$(sha256sum "$REPO_ROOT/requirements.txt" | cut -c1-16)"
if [ -f "$OKSTRA_TEST_WHEELS/.complete" ]; then
  export PIP_NO_INDEX=1 PIP_FIND_LINKS="$OKSTRA_TEST_WHEELS"
fi

okstra_setup() {
  local var
  for var in $(compgen -e | grep -E '^(OKSTRA_|CLAUDE_|CLAUDECODE$|TMUX)'); do unset "$var"; done
  export HOME="$BATS_TEST_TMPDIR/home"
  export OKSTRA_ROOT="$HOME/.okstra"
  export PROJECT="$BATS_TEST_TMPDIR/project"
  mkdir -p "$HOME" "$PROJECT"
  git -C "$PROJECT" init -q
  export PATH="$REPO_ROOT/bin:$PATH"
  cd "$PROJECT" || return 1
}

# A listing of every file under a folder with its checksum: compare before and
# after a refused command to prove nothing on disk changed.
tree_snapshot() { # <dir>
  local dir=$1
  [ -d "$dir" ] || { printf 'absent\n'; return 0; }
  (cd "$dir" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

# edit_team_state FILE CODE: set up a scenario by running python CODE on `d` (the team-state
# document) and sealing it again with okstra's own seal, so it is not a hand edit (DESIGN §14).
edit_team_state() { # <team-state.json> <python code on d>
  "$REPO_ROOT/.venv/bin/python" -c 'import sys; sys.path[:0] = sys.argv[1:3]
from pathlib import Path
from fixtures.team import edit_team_state
edit_team_state(Path(sys.argv[3]), lambda d: exec(sys.argv[4], {"d": d}))' "$REPO_ROOT/lib" "$REPO_ROOT/tests" "$1" "$2"
}

# okstra_install PREFIX: leaves PREFIX holding what `install.sh --prefix PREFIX` makes, for
# tests whose starting point is an installed okstra (not the install itself). The first call
# for a PREFIX in a bats file runs install.sh and keeps a copy; later calls restore the copy
# (cp -a: same bytes, modes and times) at the same path, where a venv works. Each install.sh
# is a fresh venv and a pip install: the biggest cost in the suite.
okstra_install() { # <prefix>
  local prefix=$1 saved
  saved="$BATS_FILE_TMPDIR/installed/$(printf '%s' "$prefix" | sha256sum | cut -c1-16)"
  rm -rf "$prefix"
  mkdir -p "$(dirname "$prefix")"
  if [ -d "$saved" ]; then
    cp -a "$saved" "$prefix"
  else
    "$REPO_ROOT/install.sh" --prefix "$prefix" >/dev/null || return 1
    mkdir -p "$(dirname "$saved")"
    cp -a "$prefix" "$saved"
  fi
}
