#!/usr/bin/env bash
# Usage: tests/bootstrap.sh
#
# Installs everything `make test` needs, idempotently, on a fresh machine:
# a .venv with the pinned dev requirements, the runtime requirements' wheels
# in build/wheels/ (the tests install from them offline), bats-core with bats-support and
# bats-assert (npm registry into .deps/, else Debian's packages), and, when
# running as root, tmux, chromium, shellcheck and GNU parallel from apt when missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf 'bootstrap: %s\n' "$*" >&2; }

# One bootstrap at a time: parallel `make` runs must not interleave installs.
mkdir -p build
exec 9> build/.bootstrap.lock
flock 9

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  say "creating .venv"
  "$PY" -m venv .venv
fi
stamp=.venv/.requirements.sha
want=$(cat requirements.txt requirements-dev.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  say "installing Python packages into .venv"
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-dev.txt
  printf '%s\n' "$want" > "$stamp"
fi

# The runtime requirements' wheels (and setuptools, which a pip-style install builds with),
# fetched once: the bats tests that run install.sh install from them offline
# (tests/bats/test_helper.bash) instead of each fetching them again into its fresh venv.
wheels=build/wheels/$(sha256sum requirements.txt | cut -c1-16)
if [ ! -f "$wheels/.complete" ]; then
  say "downloading the runtime requirements' wheels into $wheels"
  rm -rf "$wheels"
  .venv/bin/python -m pip download -q --disable-pip-version-check -d "$wheels" -r requirements.txt setuptools \
    2> >(grep -v "^WARNING: Location" >&2)
  touch "$wheels/.complete"
fi

apt_missing=()
command -v tmux >/dev/null 2>&1 || apt_missing+=(tmux)
command -v chromium >/dev/null 2>&1 || apt_missing+=(chromium)
command -v shellcheck >/dev/null 2>&1 || apt_missing+=(shellcheck)
# GNU parallel only speeds the bats run up (bats --jobs; without it the tests run one at a time),
# so it is fetched when we can, never demanded.
if ! command -v parallel >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt_missing+=(parallel)
fi
if [ ${#apt_missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing ${apt_missing[*]} with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt_missing[@]}" >/dev/null
  else
    say "missing ${apt_missing[*]}: install them (not root, or no apt-get)"
    exit 2
  fi
fi

if [ ! -x .deps/node_modules/bats/bin/bats ] || [ ! -f .deps/node_modules/bats-assert/load.bash ]; then
  if command -v npm >/dev/null 2>&1; then
    say "installing bats-core, bats-support, bats-assert from the npm registry into .deps/"
    mkdir -p .deps
    npm install --silent --no-audit --no-fund --prefix .deps bats@1.13.0 bats-support@0.3.0 bats-assert@2.2.4 >/dev/null
  elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing bats from Debian's packages"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bats bats-support bats-assert >/dev/null
    mkdir -p .deps/node_modules/bats/bin
    ln -sf /usr/bin/bats .deps/node_modules/bats/bin/bats
    ln -sfn /usr/lib/bats/bats-support .deps/node_modules/bats-support
    ln -sfn /usr/lib/bats/bats-assert .deps/node_modules/bats-assert
  else
    say "bats is missing and neither npm nor apt-get (as root) is available"
    exit 2
  fi
fi
