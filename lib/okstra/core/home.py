"""Where okstra's own files live: bin/, hooks/, schemas/, templates/, skills/ (docs/DESIGN.md §1).

A repository checkout and an install.sh prefix hold them beside `lib/`. A pip,
pipx or uv install puts the library in site-packages and the same tree under
`<venv>/share/okstra/` (setup.py's data files). One answer for every module.
"""

from __future__ import annotations

from pathlib import Path


def _find() -> Path:
    beside = Path(__file__).resolve().parents[3]
    if (beside / "schemas").is_dir():
        return beside
    import sysconfig  # only for a pip-style install: the write-guard's hot path never gets here

    for scheme in (None, "posix_user"):
        data = Path(sysconfig.get_path("data", scheme) if scheme else sysconfig.get_path("data")) / "share" / "okstra"
        if (data / "schemas").is_dir():
            return data
    return beside


ROOT = _find()
