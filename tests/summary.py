"""Print `N passed, N failed` for pytest's JUnit XML and bats' TAP together.

Usage: python3 tests/summary.py RESULTS_DIR
Exits 1 when there are failures or when no test ran at all.
"""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def count(results: Path) -> tuple[int, int, int]:
    passed = failed = skipped = 0
    junit = results / "pytest.xml"
    if junit.exists():
        for case in ET.parse(junit).iter("testcase"):
            kinds = {child.tag for child in case}
            if kinds & {"failure", "error"}:
                failed += 1
            elif "skipped" in kinds:
                skipped += 1
            else:
                passed += 1
    tap = results / "bats.tap"
    if tap.exists():
        for line in tap.read_text(encoding="utf-8", errors="replace").splitlines():
            if re.match(r"^not ok \d+", line):
                failed += 1
            elif re.match(r"^ok \d+ .*# skip", line):
                skipped += 1
            elif re.match(r"^ok \d+", line):
                passed += 1
    return passed, failed, skipped


def main(argv: list[str]) -> int:
    passed, failed, skipped = count(Path(argv[1] if len(argv) > 1 else "build/test-results"))
    line = f"{passed} passed, {failed} failed"
    print(line + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
