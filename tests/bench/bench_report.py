"""Report rows: render-final-report on the 2 MB, 1,000-finding report, validation included (DESIGN §13)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.run import Context, Row, median_wall

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fixtures.reports import make_large  # noqa: E402

RUNS = 7
BUDGET_S = 1.0


def rows(ctx: Context) -> list[Row]:
    project = ctx.tmp / "report-project"
    (project / ".okstra").mkdir(parents=True, exist_ok=True)
    data = make_large.write(project / "final-report-analysis-001.data.json")
    size = data.stat().st_size
    argv = [str(ctx.python), str(ctx.prefix / "bin" / "render-final-report"), data.name, "--no-snapshot", "--output", "out.md"]
    check = subprocess.run(argv, cwd=project, capture_output=True, text=True, check=False)
    if check.returncode != 0:
        raise SystemExit(f"bench_report: render-final-report failed ({check.returncode}): {check.stderr.strip()}")
    figure = median_wall(argv, RUNS, cwd=project)
    return [
        Row(
            f"render-final-report, {size / 1e6:.1f} MB / {make_large.FINDINGS:,} findings (validation incl.)",
            figure,
            "s",
            "budget",
            BUDGET_S,
            "<= 1.0",
            f"median of {RUNS} runs of the installed command, interpreter start-up included",
        ),
    ]
