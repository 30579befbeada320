"""The data files of a pip/pipx/uv install (everything else is in pyproject.toml).

okstra's doors, hooks, schemas, templates, skill and library also go under
`<prefix>/share/okstra/`, the same tree install.sh builds, so the hooks run the
library with `python3 -I -S` and every command finds its files
(okstra.core.home). setuptools wants one entry per folder: listed here from the
tree, never by hand.
"""

from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
TREES = ("bin", "hooks", "lib", "schemas", "skills", "templates")


def data_files():
    found = {}
    for tree in TREES:
        for path in sorted((HERE / tree).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                rel = path.relative_to(HERE)
                found.setdefault(str(Path("share/okstra") / rel.parent), []).append(str(rel))
    return sorted(found.items())


setup(data_files=data_files())
