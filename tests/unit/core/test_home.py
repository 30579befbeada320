"""core.home: where okstra's own files (bin/, hooks/, schemas/, templates/, skills/) live (DESIGN §1).

A checkout or an install.sh prefix keeps them beside `lib/`; a pip-style install keeps the
library in site-packages and the tree under `<prefix>/share/okstra/`. Each case is a real
tree in tmp_path and a fresh interpreter (ROOT is decided once, at import).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from okstra.core import cli, home, schemas

REPO = Path(__file__).resolve().parents[3]
PACKAGE = REPO / "lib" / "okstra"
ASK = "from okstra.core import home; print(home.ROOT)"


def _copy_package(into: Path) -> None:
    shutil.copytree(PACKAGE, into / "okstra", ignore=shutil.ignore_patterns("__pycache__"))


def _root_seen_by(python: str, lib: Path | None, **extra: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ["HOME"], **extra}
    if lib is not None:
        env["PYTHONPATH"] = str(lib)
    done = subprocess.run([python, "-c", ASK], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_in_a_checkout_the_root_is_the_repository_holding_the_trees():
    assert home.ROOT == REPO
    for tree in ("bin", "hooks", "schemas", "templates", "skills"):
        assert (home.ROOT / tree).is_dir(), tree


def test_every_module_reads_the_same_root():
    assert schemas.SCHEMA_DIR == home.ROOT / "schemas"
    assert cli.BIN_DIR == home.ROOT / "bin"
    assert schemas.path_of("team-state").is_file()


def test_an_install_prefix_with_schemas_beside_lib_is_the_root(tmp_path):
    prefix = tmp_path / "prefix"
    _copy_package(prefix / "lib")
    (prefix / "schemas").mkdir()
    assert _root_seen_by(sys.executable, prefix / "lib") == str(prefix)


def test_a_pip_install_finds_the_tree_under_share_okstra_of_its_environment(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    _copy_package(site)
    shared = venv / "share" / "okstra"
    (shared / "schemas").mkdir(parents=True)
    assert not (site.parent / "schemas").exists()
    assert Path(_root_seen_by(python, None)).resolve() == shared.resolve()


def test_a_user_install_finds_the_tree_under_its_user_base(tmp_path):
    base = tmp_path / "userbase"
    site = Path(sysconfig.get_path("purelib", "posix_user", vars={"userbase": str(base)}))
    _copy_package(site)
    shared = base / "share" / "okstra"
    (shared / "schemas").mkdir(parents=True)
    assert _root_seen_by(sys.executable, site, PYTHONUSERBASE=str(base)) == str(shared)


def test_with_no_tree_anywhere_the_root_stays_beside_the_library(tmp_path):
    lib = tmp_path / "prefix" / "lib"
    _copy_package(lib)
    data = Path(sysconfig.get_path("data")) / "share" / "okstra" / "schemas"
    assert not data.is_dir()
    assert _root_seen_by(sys.executable, lib) == str(tmp_path / "prefix")
