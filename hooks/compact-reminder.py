"""The Python half of hooks/compact-reminder: remind the lead of the active run (DESIGN §10)."""

import sys
from os.path import dirname, realpath

sys.path.insert(0, dirname(dirname(realpath(__file__))) + "/lib")
from okstra.harness.compact_reminder import main  # noqa: E402

raise SystemExit(main())
