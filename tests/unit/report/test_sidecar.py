"""The sidecar format (DESIGN §9): exact round trip, no value can forge structure,
statuses and required reasons are enforced, errors name the line."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okstra.core.errors import InputError
from okstra.report import sidecar as sc
from unit.report.sidecar_strategies import HOSTILE, free_text, responses

META = sc.SidecarMeta(
    "feature/rate-limit",
    "implementation-planning",
    3,
    "feature--rate-limit--r004",
    ".okstra/runs/feature--rate-limit--r004/reports/final-report-implementation-planning-003.md",
    "2025-06-01T10:00:00Z",
)


def _structure(text: str) -> list[str]:
    """The structural lines: headings and field names (values left out)."""
    return [line if line.startswith("#") else line.split(":", 1)[0] for line in text.split("\n") if line.strip()]


def _expected_structure(r: sc.Responses) -> int:
    return 1 + 1 + len(r.answers) + (len(r.blocks()) - 1)


@settings(max_examples=300, deadline=None)
@given(responses)
def test_any_responses_survive_a_round_trip_exactly(r):
    text = sc.serialize(r)
    assert sc.parse(text, "x.md") == r
    assert sc.serialize(sc.parse(text, "x.md")) == text


@settings(max_examples=300, deadline=None)
@given(responses)
def test_no_value_changes_the_number_of_headings_or_lines(r):
    text = sc.serialize(r)
    headings = [line for line in text.split("\n") if line.startswith("#")]
    assert len(headings) == _expected_structure(r)
    bound = r.plan_decision is not None and r.plan_decision.plan_sha256 is not None
    fields_per_block = 6 + 3 * len(r.answers) + sum(len(sc._BLOCK_FIELDS[b]) for b in r.blocks()[1:]) + bound
    assert len([line for line in text.split("\n") if line.startswith("- ")]) == fields_per_block
    # every field line is '- name: ' + one literal; the literal never holds a raw newline
    for line in text.split("\n"):
        assert "\r" not in line and "\u2028" not in line and "\x85" not in line


@given(free_text)
def test_quote_is_one_json_string_literal_that_reads_back(value):
    literal = sc.quote(value)
    assert "\n" not in literal
    assert sc.unquote(literal) == value
    assert json.loads(literal) == value


@given(st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=4))
def test_lone_surrogates_are_escaped_and_read_back(value):
    literal = sc.quote(value)
    assert literal.encode("utf-8")  # always encodable: every surrogate is escaped
    assert sc.unquote(literal) == value


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_hostile_answer_cannot_forge_a_block(hostile):
    r = sc.Responses(META, (sc.Answer("Q1", hostile, hostile, sc.USER),))
    text = sc.serialize(r)
    assert sc.parse(text, "x.md") == r
    assert sc.parse(text, "x.md").blocks() == ["ANSWERS"]


def test_the_canonical_text_is_stable():
    r = sc.Responses(
        META,
        (sc.Answer("Q1", "Which store?", 'Redis, "clustered"', sc.RELAYED_BY_LEAD),),
        plan_decision=sc.PlanDecision("approved", "b", None),
        report_authoring=sc.ReportAuthoring("approved", "the report-writer timed out twice"),
    )
    assert sc.serialize(r) == (
        "# User response: implementation-planning report 003\n"
        "\n"
        f"{sc.FORMAT_LINE}\n"
        "\n"
        '- task-key: "feature/rate-limit"\n'
        '- task-type: "implementation-planning"\n'
        "- report-number: 3\n"
        '- run-id: "feature--rate-limit--r004"\n'
        '- source-report: ".okstra/runs/feature--rate-limit--r004/reports/final-report-implementation-planning-003.md"\n'
        '- created-at: "2025-06-01T10:00:00Z"\n'
        "\n"
        "## ANSWERS\n"
        "\n"
        "### Q1\n"
        "\n"
        '- question: "Which store?"\n'
        '- answer: "Redis, \\"clustered\\""\n'
        '- recorded-by: "relayed-by-lead"\n'
        "\n"
        "## PLAN DECISION\n"
        "\n"
        '- status: "approved"\n'
        '- option: "B"\n'
        "- reason: null\n"
        "\n"
        "## REPORT AUTHORING\n"
        "\n"
        '- status: "approved"\n'
        '- reason: "the report-writer timed out twice"\n'
    )


@pytest.mark.parametrize(
    ("raw", "normal"),
    [(" opt 2 ", "OPT-2"), ("opt_2", "OPT-2"), ("b", "B"), ("Opt-2", "OPT-2"), ("a \t_ b", "A-B")],
)
def test_option_ids_are_normalised(raw, normal):
    assert sc.DirectionSelection(raw, "  Fast \n path ").option_id == normal
    assert sc.DirectionSelection(raw, "  Fast \n path ").option_name == "Fast path"
    assert sc.PlanDecision("approved", raw).option == normal


@pytest.mark.parametrize("raw", ["", "  ", "2B", "é", "A" * 17, "a.b", "-A"])
def test_option_ids_that_cannot_be_normalised_are_refused(raw):
    with pytest.raises(InputError, match="option id"):
        sc.DirectionSelection(raw, "name")


@pytest.mark.parametrize(
    "make",
    [
        lambda: sc.PlanDecision("approve", "A"),
        lambda: sc.PlanDecision("approved", None),
        lambda: sc.PlanDecision("rejected", None, "  "),
        lambda: sc.AnalysisReview("ok"),
        lambda: sc.AnalysisReview("changes-requested", None),
        lambda: sc.ReportAuthoring("approved", ""),
        lambda: sc.ReportAuthoring("approved", " \n "),
        lambda: sc.ReportAuthoring("granted", "why"),
        lambda: sc.SidecarMeta("feature/x\n", "analysis", 1, "r1", "a.md", "now"),
        lambda: sc.SidecarMeta("feature/x", "analysis", True, "r1", "a.md", "now"),
        lambda: sc.SidecarMeta("feature/x", "analysis", 0, "r1", "a.md", "now"),
        lambda: sc.Answer("Q 1", "q", "a", sc.USER),
        lambda: sc.Responses(META, (sc.Answer("Q1", "q", "a", sc.USER), sc.Answer("Q1", "q", "b", sc.USER))),
    ],
)
def test_invalid_records_are_refused(make):
    with pytest.raises(InputError):
        make()


def _text(**kw) -> str:
    return sc.serialize(sc.Responses(META, (sc.Answer("Q1", "q", "a", sc.USER),), **kw))


@pytest.mark.parametrize(
    ("mutate", "line", "words"),
    [
        (lambda t: t.replace("# User response: implementation-planning", "# User response: analysis"), 1, "title"),
        (lambda t: t.replace(sc.FORMAT_LINE, "<!-- other -->"), 3, "format line"),
        (lambda t: t.replace('- status: "approved"', '- status: "approvedd"'), 22, "not one of"),
        (lambda t: t.replace('- reason: "yes"', '- reason: ""'), 23, "must not be empty"),
        (lambda t: t.replace('- reason: "yes"', "- reason: null"), 23, "expected a string"),
        (lambda t: t.replace('- answer: "a"', "- answer: a"), 17, "not a quoted string"),
        (lambda t: t.replace('- answer: "a"', '- answer: "a\\x"'), 17, "bad escape"),
        (lambda t: t.replace('- answer: "a"', '- answer: "a" "b"'), 17, "unescaped quote"),
        (lambda t: t.replace('- answer: "a"', '- notes: "a"'), 17, "expected the field 'answer'"),
        (lambda t: t.replace("### Q1", "### Q 1"), 14, "not a question id"),
        (lambda t: t.replace('- recorded-by: "user"', '- recorded-by: "USER"'), 18, "recorded-by"),
        (lambda t: t.replace('- recorded-by: "user"\n', ""), 19, "expected the field '- recorded-by"),
        (lambda t: t.replace("## REPORT AUTHORING", "## REPORT AUTHORS"), 20, "block heading"),
        (lambda t: t + "\n## REPORT AUTHORING\n", 25, "twice or out of order"),
        (lambda t: t.replace("- report-number: 3", '- report-number: "3"'), 7, "report-number"),
        (lambda t: t.split("## ANSWERS")[0], 12, "file ends"),
    ],
)
def test_parse_errors_name_the_line(mutate, line, words):
    text = mutate(_text(report_authoring=sc.ReportAuthoring("approved", "yes")))
    with pytest.raises(InputError) as err:
        sc.parse(text, "side.md")
    assert f"side.md:{line}:" in str(err.value) and words in str(err.value)
    assert "\n" not in str(err.value)


def test_blank_lines_and_crlf_are_tolerated_on_read():
    text = _text(analysis_review=sc.AnalysisReview("accepted", None))
    loose = "\n\n" + text.replace("\n\n", "\n\n\n").replace("\n", "\r\n")
    assert sc.parse(loose, "x.md") == sc.parse(text, "x.md")


def test_blocks_out_of_order_are_refused():
    text = _text(plan_decision=sc.PlanDecision("approved", "A"), report_authoring=sc.ReportAuthoring("denied", "no"))
    head, plan = text.split("## PLAN DECISION")
    plan, authoring = plan.split("## REPORT AUTHORING")
    swapped = head + "## REPORT AUTHORING" + authoring.rstrip("\n") + "\n\n## PLAN DECISION" + plan.rstrip("\n") + "\n"
    with pytest.raises(InputError, match="out of order"):
        sc.parse(swapped, "x.md")


def test_the_export_object_maps_to_the_same_record():
    r = sc.Responses(
        META,
        (sc.Answer("Q1", "q", "a", sc.USER),),
        sc.PlanDecision("rejected", None, "too big"),
        sc.AnalysisReview("accepted"),
        sc.DirectionSelection("opt 2", "Two"),
        sc.ReportAuthoring("denied", "no"),
    )
    assert sc.responses_from_export_object(json.loads(json.dumps(r.to_dict()))) == r


@pytest.mark.parametrize(
    "obj",
    [
        [],
        {"meta": {}, "answers": []},
        {"answers": []},
        {"meta": dict(META.__dict__), "answers": []},
        {"meta": sc.Responses(META).to_dict()["meta"], "answers": {}},
        {"meta": sc.Responses(META).to_dict()["meta"], "answers": [{"questionId": "Q1"}]},
        {"meta": sc.Responses(META).to_dict()["meta"], "answers": [], "extra": 1},
        {"meta": sc.Responses(META).to_dict()["meta"], "answers": [], "planDecision": {"status": "approved", "x": 1}},
    ],
)
def test_malformed_export_objects_are_refused(obj):
    with pytest.raises(InputError):
        sc.responses_from_export_object(obj)


PLAN_SHA = "0123456789abcdef" * 4


def test_a_plan_decision_carries_the_sha256_of_the_plan_it_decides():
    r = sc.Responses(META, plan_decision=sc.PlanDecision("approved", "B", None, PLAN_SHA))
    text = sc.serialize(r)
    assert text.endswith('- reason: null\n- plan-sha256: "' + PLAN_SHA + '"\n')
    assert sc.parse(text, "x.md").plan_decision.plan_sha256 == PLAN_SHA
    assert sc.responses_from_export_object(r.to_dict()) == r


def test_a_plan_decision_written_before_the_binding_reads_back_unbound_and_unchanged():
    legacy = sc.serialize(sc.Responses(META, plan_decision=sc.PlanDecision("approved", "B")))
    assert "plan-sha256" not in legacy
    parsed = sc.parse(legacy, "x.md")
    assert parsed.plan_decision.plan_sha256 is None and sc.serialize(parsed) == legacy


@pytest.mark.parametrize("bad", ["abc", PLAN_SHA.upper(), PLAN_SHA + "0", ""])
def test_a_plan_sha256_that_is_not_64_lower_case_hex_digits_is_refused(bad):
    with pytest.raises(InputError, match="plan-sha256"):
        sc.PlanDecision("approved", "B", None, bad)
    text = sc.serialize(sc.Responses(META, plan_decision=sc.PlanDecision("approved", "B", None, PLAN_SHA)))
    with pytest.raises(InputError, match=r"x.md:\d+: .*plan-sha256"):
        sc.parse(text.replace(PLAN_SHA, bad), "x.md")


def test_a_typed_plan_decision_may_not_name_its_own_plan_sha256():
    with pytest.raises(InputError, match="unknown field"):
        sc.plan_decision_from({"status": "approved", "option": "B", "planSha256": PLAN_SHA}, "--plan-decision", bound=False)
