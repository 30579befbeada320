from __future__ import annotations

from pathlib import Path

from okstra.core import settings


def test_okstra_root_defaults_to_home_dot_okstra():
    s = settings.Settings.from_env({"HOME": "/home/u"})
    assert s.root == Path("/home/u/.okstra")
    assert s.project_root is None


def test_knobs_are_read_from_the_environment():
    s = settings.Settings.from_env({"HOME": "/h", "OKSTRA_ROOT": "/opt/ok", "OKSTRA_DEBUG": "yes", "OKSTRA_PROJECT_ROOT": "/p"})
    assert (s.root, s.project_root) == (Path("/opt/ok"), Path("/p"))


def test_every_knob_is_named_okstra_star():
    assert all(name.startswith("OKSTRA_") for name in settings.KNOBS)
