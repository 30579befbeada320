"""The Python half of hooks/write-guard: decide one PreToolUse call (DESIGN §10).

Run by the sh door with `-I -S`, which passes this file's path with symlinks
already resolved, so lib/ is found without `os` (importing it would cost about
a millisecond of the hook's budget, DESIGN §13). Imports only
okstra.harness.write_guard -> okstra.model.active_run -> okstra.core basics.
"""

import sys

sys.path.insert(0, (__file__.rpartition("/")[0] or ".") + "/../lib")
from okstra.harness.write_guard import main  # noqa: E402

raise SystemExit(main())
