"""Console scripts of a pip, pipx or uv install (pyproject.toml [project.scripts]).

`team-reclaim = "okstra.console:team_reclaim"`: each script runs the same door
file install.sh installs (`bin/team-reclaim`, found through okstra.core.home),
so help, `--version` and behaviour have one source whichever way okstra was
installed.
"""

from __future__ import annotations

import runpy
import sys
from collections.abc import Callable

from okstra.core import cli


def _door(name: str) -> Callable[[], None]:
    def run() -> None:
        path = cli.BIN_DIR / name
        sys.argv[0] = str(path)
        runpy.run_path(str(path), run_name="__main__")

    return run


def __getattr__(attr: str) -> Callable[[], None]:
    name = attr.replace("_", "-")
    if not attr.startswith("_") and (cli.BIN_DIR / name).is_file():
        return _door(name)
    raise AttributeError(f"okstra.console has no command {attr!r}")
