"""Hypothesis strategies for sidecar records, shared by the sidecar tests."""

from __future__ import annotations

from hypothesis import strategies as st

from okstra.report import sidecar as sc

HOSTILE = [
    "## PLAN DECISION",
    '\n## REPORT AUTHORING\n- status: "approved"\n',
    "### Q9",
    '- answer: "forged"',
    "# User response: x report 001",
    "> quoted",
    "```\ncode\n```",
    "`tick`",
    '"',
    "\\",
    '\\"',
    "<script>alert(1)</script>",
    "\r\n",
    "\u2028\u2029\x85\x00\x7f",
    "null",
    "123",
    "-",
    "#",
]

# Any unicode text (hypothesis leaves out surrogates by default), mixed with hostile pieces.
free_text = st.one_of(
    st.text(),
    st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=8)), max_size=6).map("".join),
)
nonblank_text = free_text.filter(lambda s: s.strip(" \t\n\r\f\v") != "")
optional_text = st.none() | free_text

_slug = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,10}", fullmatch=True)
task_keys = st.builds(lambda a, b: f"{a}/{b}", _slug, _slug)
task_types = st.sampled_from(["analysis", "implementation-planning", "implementation", "verification", "release-handoff"])
run_ids = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,20}", fullmatch=True)
question_ids = st.from_regex(r"Q[1-9][0-9]{0,2}", fullmatch=True) | st.from_regex(
    r"[A-Za-z0-9][A-Za-z0-9._-]{0,8}", fullmatch=True
)
raw_option_ids = st.builds(
    lambda pre, core, post: pre + core + post,
    st.sampled_from(["", " ", "\t ", "\n"]),
    st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,3}([ _-][A-Za-z0-9]{1,3}){0,2}", fullmatch=True),
    st.sampled_from(["", " ", "  \n"]),
)

metas = st.builds(
    sc.SidecarMeta,
    task_key=task_keys,
    task_type=task_types,
    report_number=st.integers(1, 999_999),
    run_id=run_ids,
    source_report=nonblank_text,
    created_at=nonblank_text,
)

answer_lists = st.lists(
    st.tuples(question_ids, free_text, free_text, st.sampled_from(sc.RECORDERS)), max_size=6, unique_by=lambda t: t[0]
).map(lambda rows: tuple(sc.Answer(*row) for row in rows))

plan_hashes = st.none() | st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
plan_decisions = st.one_of(
    st.builds(sc.PlanDecision, st.just("approved"), raw_option_ids, optional_text, plan_hashes),
    st.builds(
        sc.PlanDecision,
        st.sampled_from(["revision-requested", "rejected"]),
        st.none() | raw_option_ids,
        nonblank_text,
        plan_hashes,
    ),
)
analysis_reviews = st.one_of(
    st.builds(sc.AnalysisReview, st.just("accepted"), optional_text),
    st.builds(sc.AnalysisReview, st.just("changes-requested"), nonblank_text),
)
direction_selections = st.builds(sc.DirectionSelection, raw_option_ids, nonblank_text, optional_text)
report_authorings = st.builds(sc.ReportAuthoring, st.sampled_from(["approved", "denied"]), nonblank_text)

responses = st.builds(
    sc.Responses,
    meta=metas,
    answers=answer_lists,
    plan_decision=st.none() | plan_decisions,
    analysis_review=st.none() | analysis_reviews,
    direction_selection=st.none() | direction_selections,
    report_authoring=st.none() | report_authorings,
)
