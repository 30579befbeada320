"""The Python half of hooks/write-guard: decide one PreToolUse call (SPEC §10).

Run by the sh door with `-I -S`; imports only okstra.harness.write_guard,
which imports okstra.model.active_run and okstra.core basics (SPEC §13).
"""
import sys
from os.path import dirname, realpath

sys.path.insert(0, dirname(dirname(realpath(__file__))) + "/lib")
from okstra.harness.write_guard import main  # noqa: E402

raise SystemExit(main())
