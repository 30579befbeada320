"""FolderWatch: wake when a file lands in a watched folder, with or without inotify (DESIGN §5)."""

from __future__ import annotations

import os
import threading
import time

import pytest

from okstra.team import inotify

HANG = 60  # seconds: bounds a watch that never wakes; never a measured figure


@pytest.fixture(params=[True, False], ids=["inotify", "stat-poll"])
def use_inotify(request):
    return request.param


def _land_later(path, delay):
    def land():
        time.sleep(delay)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("done\n")
        os.replace(tmp, path)  # as fsio.atomic_write lands a result

    thread = threading.Thread(target=land)
    thread.start()
    return thread


def test_linux_libc_has_inotify():
    with inotify.FolderWatch([]) as watch:
        assert watch.uses_inotify


def test_a_landed_file_wakes_the_wait_with_the_change_answer(tmp_path, use_inotify):
    with inotify.FolderWatch([tmp_path], use_inotify=use_inotify) as watch:
        assert watch.uses_inotify is use_inotify
        lander = _land_later(tmp_path / "result.md", 0.2)
        # Only the landing can make it answer True; HANG only bounds a broken watch (how soon
        # it wakes is make bench's question: bench_liveness).
        woke = watch.wait(HANG)
        lander.join()
        assert woke is True


def test_a_quiet_folder_answers_timed_out_and_still_wakes_afterwards(tmp_path, use_inotify):
    with inotify.FolderWatch([tmp_path], use_inotify=use_inotify) as watch:
        assert watch.wait(0.3) is False
        lander = _land_later(tmp_path / "result.md", 0)
        assert watch.wait(HANG) is True
        lander.join()


def test_a_folder_created_later_is_watched_once_it_exists(tmp_path, use_inotify):
    later = tmp_path / "results"
    with inotify.FolderWatch([tmp_path, later], use_inotify=use_inotify) as watch:
        later.mkdir()
        assert watch.wait(HANG) is True  # the parent's change (mkdir) wakes it and adds the new folder
        lander = _land_later(later / "r.md", 0.1)
        woke = watch.wait(HANG)
        lander.join()
        assert woke is True


def test_close_releases_the_descriptor_and_is_idempotent(tmp_path):
    watch = inotify.FolderWatch([tmp_path])
    fd = watch.fd
    watch.close()
    watch.close()
    assert watch.fd is None
    with pytest.raises(OSError):
        os.fstat(fd)
