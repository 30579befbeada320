"""Hostile figures (issue 15, DESIGN §10/§14): the hostile corpus's QUICK size (every
category, the SIGKILL/disk-full matrix with 2 kills and 1 disk-full run per writing step;
`make hostile` runs the full one) as rows beside the budgets: held of cases, and bypasses,
exit-70s, orphans, torn files and lost files of cases, all zero; the guard's worst case
against the 1 s a hook must answer in."""

from __future__ import annotations

from bench.run import Context, Row
from hostile import corpus


def rows(ctx: Context) -> list[Row]:
    tally = corpus.collect(corpus.QUICK)
    cases = float(tally.cases)
    note = "make hostile QUICK=1's corpus (make hostile: the full one); 0 of cases is the budget"
    zero = [
        ("bypasses (guard allowed, protected target changed)", tally.bypasses),
        ("exit-70s (or a signal, a traceback, a hang)", tally.exit70),
        ("orphans (processes left after teardown)", tally.orphans),
        ("torn files (after SIGKILL or a full disk)", tally.torn),
        ("lost files (acknowledged, then gone)", tally.lost),
    ]
    out = [Row("hostile: cases held", tally.held, "cases", "cases", cases, ">= 1.0", note)]
    # A failing row names its cases (the first three), so the table alone says what to look at.
    out += [
        Row(f"hostile: {name}", len(found), "cases", "cases", cases, "<= 0", "; ".join(found[:3]) if found else "")
        for name, found in zero
    ]
    out.append(
        Row(
            "hostile: SIGKILLs that found the command running",
            tally.kills_mid_run,
            "kills",
            "kills sent",
            float(tally.kills),
            ">= 0.2",
            f"random moments of each writing command's run; disk-full runs: {tally.disk_full_runs}",
        )
    )
    out.append(
        Row(
            "hostile: write-guard worst case (CPU)",
            tally.slowest,
            "s",
            "hook answer limit",
            1.0,
            "<= 1.0",
            f"slowest input: {tally.slowest_case}; wall max {tally.slowest_wall * 1000:.0f} ms on this machine",
        )
    )
    return out
