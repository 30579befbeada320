"""Report rows on the 2 MB, 1,000-finding report (DESIGN §13): render-final-report (validation
included), and its HTML view: render-report-views, first paint and the findings filter in headless
Chromium (the system chromium through playwright, as the view's tests drive it)."""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

from bench.run import Context, Row, median_wall

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fixtures.reports import make_large  # noqa: E402

RUNS = 7
BUDGET_S = 1.0
PAGE_LOADS = 5
FILTER_BUDGET_S = 0.1
CHROMIUM = "/usr/bin/chromium"
# The page's own clock: first-contentful-paint from navigation start, and one filter pass
# (the text of 1,000 findings read and matched, visibility set, layout forced) — cold, the
# first filter after load, which also builds the filter's text cache.
FIRST_PAINT_JS = "() => performance.getEntriesByName('first-contentful-paint')[0].startTime / 1000"
FILTER_JS = """(query) => {
  const t0 = performance.now();
  document.getElementById("finding-filter").value = query;
  window.okstraFilterFindings();
  document.body.offsetHeight;
  return (performance.now() - t0) / 1000;
}"""


def rows(ctx: Context) -> list[Row]:
    project = ctx.tmp / "report-project"
    (project / ".okstra").mkdir(parents=True, exist_ok=True)
    data = make_large.write(project / "final-report-analysis-001.data.json")
    size = data.stat().st_size
    argv = [str(ctx.python), str(ctx.prefix / "bin" / "render-final-report"), data.name, "--no-snapshot"]
    check = subprocess.run(argv, cwd=project, capture_output=True, text=True, check=False)
    if check.returncode != 0:
        raise SystemExit(f"bench_report: render-final-report failed ({check.returncode}): {check.stderr.strip()}")
    figure = median_wall(argv, RUNS, cwd=project)
    return _view_rows(ctx, project, data, size) + [
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


def _browser_figures(page_path: Path) -> tuple[float, float]:
    """Median first paint and median cold filter time over fresh page loads."""
    from playwright.sync_api import sync_playwright

    paints, filters = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        for n in range(PAGE_LOADS):
            page = browser.new_page()
            page.goto(page_path.as_uri(), wait_until="load")
            page.wait_for_function("performance.getEntriesByName('first-contentful-paint').length > 0")
            paints.append(page.evaluate(FIRST_PAINT_JS))
            filters.append(page.evaluate(FILTER_JS, f"module {n + 7}"))
            if page.locator("#finding-count").inner_text().startswith("1000 of"):
                raise SystemExit("bench_report: the filter matched everything: the query measures nothing")
            page.close()
        browser.close()
    return statistics.median(paints), statistics.median(filters)


def _view_rows(ctx: Context, project: Path, data: Path, size: int) -> list[Row]:
    argv = [str(ctx.python), str(ctx.prefix / "bin" / "render-report-views"), data.name]
    check = subprocess.run(argv, cwd=project, capture_output=True, text=True, check=False)
    if check.returncode != 0:
        raise SystemExit(f"bench_report: render-report-views failed ({check.returncode}): {check.stderr.strip()}")
    render = median_wall(argv, RUNS, cwd=project)
    page = data.with_name(data.name.replace(".data.json", ".html"))  # beside the data: it is no run's report
    paint, filtered = _browser_figures(page)
    page_mb = page.stat().st_size / 1e6
    what = f"{size / 1e6:.1f} MB / {make_large.FINDINGS:,} findings"
    return [
        Row(
            f"render-report-views (HTML view), {what}",
            render,
            "s",
            "budget",
            BUDGET_S,
            "<= 1.0",
            f"median of {RUNS} runs of the installed command, validation and interpreter start-up included; page {page_mb:.1f} MB",
        ),
        Row(
            f"HTML view first paint in Chromium, {what}",
            paint,
            "s",
            "budget",
            BUDGET_S,
            "<= 1.0",
            f"median over {PAGE_LOADS} fresh loads of first-contentful-paint (file://, headless system chromium)",
        ),
        Row(
            f"HTML view findings filter in Chromium, {what}",
            filtered,
            "s",
            "budget",
            FILTER_BUDGET_S,
            "<= 1.0",
            f"median over {PAGE_LOADS} fresh loads of the first text filter (text cache built, layout forced)",
        ),
    ]
