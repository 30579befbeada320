"""`make bench`: measure the DESIGN §13 budgets as ratios against baselines, print a table.

Each `tests/bench/bench_*.py` module defines `rows(ctx: Context) -> list[Row]`.
The context installs okstra once into a temporary prefix (so figures are for
the installed commands) and measures the interpreter start-up baseline once.
Usage: python tests/bench/run.py [NAME_FILTER]
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "lib"))
sys.path.insert(0, str(REPO / "tests"))


@dataclass(frozen=True)
class Row:
    name: str
    figure: float
    unit: str
    baseline_name: str
    baseline: float
    budget: str  # e.g. "<= 1.3" or ">= 1.0": the limit the ratio must meet
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.figure / self.baseline if self.baseline else float("inf")

    @property
    def ok(self) -> bool:
        op, limit = self.budget.split()
        return self.ratio <= float(limit) if op == "<=" else self.ratio >= float(limit)


@dataclass
class Context:
    prefix: Path
    tmp: Path

    @property
    def python(self) -> Path:
        return self.prefix / "venv" / "bin" / "python"

    def startup(self, runs: int = 30) -> float:
        """Median wall time of the installed interpreter's bare start-up (`python -c pass`)."""
        if not hasattr(self, "_startup"):
            self._startup = median_wall([str(self.python), "-c", "pass"], runs)
        return self._startup


def median_wall(argv: list[str], runs: int, **kw) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def fmt(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"
    if unit == "%":
        return f"{value:.2f} %"
    return f"{value:,.0f} {unit}".strip()


def main(argv: list[str]) -> int:
    wanted = argv[1] if len(argv) > 1 else ""
    with tempfile.TemporaryDirectory(prefix="okstra-bench-") as tmp:
        prefix = Path(tmp) / "prefix"
        subprocess.run([str(REPO / "install.sh"), "--prefix", str(prefix)], check=True, stdout=subprocess.DEVNULL)
        # Flush the install's writes so they do not land inside the first timed fsyncs.
        os.sync()
        ctx = Context(prefix=prefix, tmp=Path(tmp))
        rows: list[Row] = []
        for path in sorted(Path(__file__).parent.glob("bench_*.py")):
            if wanted and wanted not in path.stem:
                continue
            spec = importlib.util.spec_from_file_location(path.stem, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            print(f"bench: {path.stem} ...", file=sys.stderr, flush=True)
            rows.extend(module.rows(ctx))
    head = ("measure", "figure", "baseline", "ratio", "budget", "ok")
    table = [head] + [
        (
            r.name,
            fmt(r.figure, r.unit),
            f"{r.baseline_name} = {fmt(r.baseline, r.unit)}",
            f"{r.ratio:.3f}",
            r.budget,
            "yes" if r.ok else "NO",
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for i, row in enumerate(table):
        print("  ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    for r in rows:
        if r.note:
            print(f"note: {r.name}: {r.note}")
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
