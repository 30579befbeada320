"""render-report-views: the self-contained HTML page (escaping, metadata, translation, paths)."""

from __future__ import annotations

import hashlib
import html
import json
import re
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import tree_snapshot
from fixtures.reports import reportfix
from okstra.commands import render_report_views
from okstra.core.errors import InputError, PathEscapeError, ProblemsFound
from okstra.report import user_response, views

REPORTS = ".okstra/runs/feature--rate-limit--r001/reports"


def _place(project, task_type="analysis", document=None):
    name = f"{REPORTS}/final-report-{task_type}-001.data.json"
    if document is None:
        return reportfix.place(project, name, source=reportfix.HERE / f"{task_type}.data.json")
    return reportfix.place(project, name, document)


class _Scripts(HTMLParser):
    """Every element the browser would see, and the text of each <script>."""

    def __init__(self):
        super().__init__()
        self.tags, self.scripts, self._in = [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in = []

    def handle_data(self, data):
        if self._in is not None:
            self._in.append(data)

    def handle_endtag(self, tag):
        if tag == "script" and self._in is not None:
            self.scripts.append("".join(self._in))
            self._in = None


def _parse(text):
    p = _Scripts()
    p.feed(text)
    return p


def _meta(text):
    return json.loads(re.search(r'<script type="application/json" id="okstra-meta">\n(.*?)\n</script>', text, re.S).group(1))


@pytest.mark.parametrize("task_type", reportfix.TASK_TYPES)
def test_every_example_renders_a_self_contained_page(project, task_type):
    data = _place(project, task_type)
    view = views.render_view(project, str(data))
    text = view.output.read_text(encoding="utf-8")
    assert view.output.name == f"final-report-{task_type}-001.html"
    parsed = _parse(text)
    assert [t for t, a in parsed.tags if t in ("link", "iframe", "object", "embed", "img")] == []
    assert all("src" not in a for t, a in parsed.tags if t == "script")
    assert not re.search(r"(?:src|href)=[\"']?(?:https?:)?//", text), "an external URL"
    assert "@media print" in text
    assert len(parsed.scripts) == 3
    meta = _meta(text)
    assert meta["sourceDataSha256"] == hashlib.sha256(data.read_bytes()).hexdigest() == view.sha256
    assert meta["sourceReport"] == f"{REPORTS}/final-report-{task_type}-001.md"
    assert meta["sourceData"] == f"{REPORTS}/final-report-{task_type}-001.data.json"
    assert (meta["taskKey"], meta["taskType"], meta["reportNumber"]) == (
        "feature/rate-limit",
        task_type,
        reportfix.example(task_type)["header"]["reportNumber"],
    )
    assert f'<dd class="mono" id="source-sha256">{view.sha256}</dd>' in text
    for finding in reportfix.example(task_type)["findings"]:
        assert f'id="finding-{finding["id"]}"' in text


def test_the_form_shows_exactly_the_decision_blocks_that_apply(project):
    planning = views.render_view(project, str(_place(project, "implementation-planning"))).output.read_text()
    assert 'id="block-plan-decision"' in planning and 'id="block-direction-selection"' in planning
    assert 'id="block-analysis-review"' not in planning and 'id="block-report-authoring"' not in planning
    assert '<option value="B">B: Fixed window counter (INCR + EXPIRE)</option>' in planning
    analysis = views.render_view(project, str(_place(project, "analysis"))).output.read_text()
    assert 'id="block-analysis-review"' in analysis and 'id="block-plan-decision"' not in analysis
    assert '<select id="answer-Q1" data-question-id="Q1">' in analysis
    assert '<textarea id="answer-Q2" data-question-id="Q2" rows="3"></textarea>' in analysis


def test_the_participants_table_shows_token_usage(project):
    text = views.render_view(project, str(_place(project, "analysis"))).output.read_text()
    assert (
        '<td>Codex</td><td>analyst</td><td>GPT-5 Codex</td><td class="mono">gpt-5-codex</td><td class="num">98,004</td>' in text
    )


def test_a_script_in_a_finding_is_escaped_everywhere(project):
    doc = reportfix.example("analysis")
    evil = "</script><script>alert(1)</script><!--"
    doc["findings"][0]["title"] = evil
    doc["openQuestions"][1]["question"] = evil
    doc["header"]["reportOwner"] = evil
    text = views.render_view(project, str(_place(project, document=doc))).output.read_text()
    assert evil not in text
    assert html.escape(evil) in text
    parsed = _parse(text)
    assert len(parsed.scripts) == 3
    assert _meta(text)["openQuestions"][1]["question"] == evil  # intact once parsed, inert in the page


def test_the_translation_is_shown_when_present(project):
    data = _place(project, "analysis")
    translated = data.with_name("final-report-analysis-001.ko.md")
    translated.write_text("# 최종 보고서\n<b>번역</b> & 끝\n", encoding="utf-8")
    view = views.render_view(project, str(data.with_name("final-report-analysis-001.md")))
    text = view.output.read_text()
    assert view.translation == translated and not view.translation_missing
    # rendered as HTML (raw HTML in it stays text), with a switch to the source report
    assert "<h1>최종 보고서</h1>\n<p>&lt;b&gt;번역&lt;/b&gt; &amp; 끝</p>" in text
    assert 'id="language-switch"' in text and '<div id="source-report" lang="en" hidden>' in text
    assert 'id="translation-missing"' not in text
    assert '<html lang="ko">' in text


def test_a_missing_translation_is_said_and_the_source_shown(project, capsys):
    data = _place(project, "analysis")
    assert render_report_views.main([str(data), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["translationMissing"] is True and out["translation"] is None
    text = (project / out["output"]).read_text()
    assert 'id="translation-missing"' in text and "final-report-analysis-001.ko.md</span> does not exist" in text
    assert 'id="finding-list"' in text and 'id="language-switch"' not in text


def test_a_report_without_language_has_no_translation_section(project):
    text = views.render_view(project, str(_place(project, "verification"))).output.read_text()
    assert 'id="translation"' not in text


def test_invalid_data_exits_1_and_writes_nothing(project, capsys):
    doc = reportfix.example("analysis")
    doc["findings"][0]["severity"] = "severe"
    data = _place(project, document=doc)
    before = tree_snapshot(project)
    with pytest.raises(ProblemsFound):
        views.render_view(project, str(data))
    assert render_report_views.main([str(data)]) == 1
    assert tree_snapshot(project) == before


def test_bad_arguments_are_refused(project):
    data = _place(project)
    with pytest.raises(PathEscapeError):
        views.render_view(project, str(data), "../out.html")
    with pytest.raises(InputError, match="neither a report"):
        views.render_view(project, "notes.txt")
    with pytest.raises(InputError, match="is not a .html file"):
        views.render_view(project, str(data), str(data))
    with pytest.raises(InputError, match="no such report data file"):
        views.render_view(project, f"{REPORTS}/none.md")


def test_a_script_that_could_close_its_element_is_not_inlined(tmp_path):
    bad = tmp_path / "x.js"
    bad.write_text('var s = "</SCRIPT>";', encoding="utf-8")
    with pytest.raises(InputError, match="cannot be inlined"):
        views.inline_script(bad)
    assert "</script" not in views.inline_script(views.SIDECAR_JS).lower()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.text(
        alphabet=st.sampled_from("<>&\"'/ascript!-=`x한") | st.characters(codec="utf-8"), min_size=1, max_size=40
    ).filter(lambda s: s.strip() and not any(c in s for c in "\r\n\x00\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e"))
)
def test_arbitrary_report_text_never_appears_unescaped(project, text):
    import markupsafe

    marked = f"ZQX{text}QXZ"  # markers make "appears raw" meaningful even for a one-character text
    doc = reportfix.example("implementation-planning")
    doc["header"]["reportLanguage"] = "ko"
    doc["findings"][0]["title"] = marked
    doc["findings"][0]["summary"] = marked
    doc["findings"][0]["evidence"][0]["quote"] = marked
    doc["implementationPlanning"]["implementationOptions"][0]["name"] = marked
    doc["openQuestions"][0]["question"] = marked
    page = views.render_html(doc, {**_meta_for(project, doc), "openQuestions": doc["openQuestions"]}, marked, "t.ko.md")
    if any(c in text for c in '<>&"'):
        assert marked not in page
    # plain-text fields (titles, names, questions, quotes) are escaped as they are; Markdown
    # fields (summary, translation) go through report.markdown, whose own tests cover them
    assert page.count(str(markupsafe.escape(marked))) >= 5
    parsed = _parse(page)
    assert len(parsed.scripts) == 3
    assert [t for t, _ in parsed.tags].count("script") == 3
    assert _meta(page)["openQuestions"][0]["question"] == marked


def _meta_for(project, doc):
    report = project / REPORTS / "r.md"
    return views._meta(project, doc, report, report.with_suffix(".data.json"), "0" * 64)


def test_the_lead_authored_fallback_is_said_on_the_page(project):
    data = reportfix.place_fallback(project)
    text = views.render_view(project, str(data)).output.read_text(encoding="utf-8")
    assert (
        '<p class="note" id="fallback-note"><strong>Lead-authored fallback: report-writer dispatch failed — `no result after 900 s'
        in text
    )


@pytest.mark.parametrize(
    "target",
    [
        f"{REPORTS}/user-responses/user-response-analysis-001.md",
        f"{REPORTS}/user-responses/user-response-analysis-001.html",
        ".okstra/active-run.json",
        ".okstra/runs/feature--rate-limit--r001/team-state.json",
        ".okstra/view.html",
        "src/app.py",
        "index.html",
    ],
)
def test_an_output_onto_a_sidecar_a_state_file_or_outside_the_runs_reports_is_refused(project, target):
    data = _place(project)
    sidecar = project / REPORTS / "user-responses" / "user-response-analysis-001.md"
    sidecar.parent.mkdir(parents=True)
    sidecar.write_text("the user's answers\n")
    before = tree_snapshot(project)
    with pytest.raises(InputError):
        views.render_view(project, str(data), target)
    assert render_report_views.main([str(data), "--output", target]) == 2
    assert tree_snapshot(project) == before


def test_an_output_inside_the_runs_reports_folder_is_written(project):
    data = _place(project)
    assert views.render_view(project, str(data), f"{REPORTS}/copy.html").output == project / REPORTS / "copy.html"


def test_a_failover_stand_in_and_the_open_breakers_are_said_under_the_participants(project):
    doc = reportfix.example("analysis")
    reason = "rate-limited: <b>quota</b> & more"
    doc["participants"][1]["stoodInFor"] = [{"workerId": "codex", "attempt": 2, "provider": "Codex", "reason": reason}]
    doc["breakerOpen"] = ["Codex"]
    text = views.render_view(project, str(_place(project, "analysis", doc))).output.read_text()
    section = text[
        text.index('<section id="participants">') : text.index("</section>", text.index('<section id="participants">'))
    ]
    who = doc["participants"][1]["workerId"]
    assert (
        f'<li class="stood-in"><strong>Stood in:</strong> <span class="mono">{who}</span> (Claude Code, analyst) stood in for '
        f'<span class="mono">codex</span> attempt 2 (Codex), which hit a limit: {html.escape(reason)}</li>'
    ) in section
    assert "<b>quota</b>" not in text
    assert (
        '<li class="breaker"><strong>Breaker open</strong> (failover skips these providers for the rest of the run): Codex</li>'
        in section
    )


def test_a_report_without_a_failover_has_no_failover_list(project):
    text = views.render_view(project, str(_place(project, "analysis"))).output.read_text()
    assert 'id="failover"' not in text


def test_a_sidecar_whose_seal_does_not_match_is_said_on_the_page_and_the_form_starts_empty(project, capsys):
    data = _place(project, "analysis")
    rel = f"{REPORTS}/final-report-analysis-001.md"
    user_response.write(project, rel, '{"Q2": "only /health"}')
    sidecar_path = project / ".okstra/runs/feature--rate-limit--r001/reports/user-responses/user-response-analysis-001.md"
    sidecar_path.write_text(sidecar_path.read_text().replace("only /health", "no route at all"))  # an edit outside okstra
    before = sidecar_path.read_bytes()
    assert render_report_views.main([str(data), "--json"]) == 0
    captured = capsys.readouterr()
    shown = ".okstra/runs/feature--rate-limit--r001/reports/user-responses/user-response-analysis-001.md"
    # One warning line on stderr (beside the missing translation's note), naming the file and the seal.
    warnings = [line for line in captured.err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and warnings[0].startswith("render-report-views: warning: Earlier answers were not loaded: ")
    assert f"{shown} was changed outside okstra (its sha256 differs from the seal okstra wrote)" in warnings[0]
    out = json.loads(captured.out)
    assert shown in out["recordedRefused"]
    text = (project / out["output"]).read_text()
    meta = _meta(text)
    assert meta["recorded"] is None and meta["recordedRefused"] == out["recordedRefused"]
    notice = re.search(r'<p class="note" id="recorded-refused" role="alert"><strong>(.*?)</strong></p>', text).group(1)
    assert html.unescape(notice) == out["recordedRefused"]
    assert "\n" not in notice and "restore that file" in notice and "move it away" in notice
    assert "the form starts empty: earlier answers were not loaded" in text
    assert "no route at all" not in text and "Recorded answer" not in text
    assert sidecar_path.read_bytes() == before  # the view changes nothing


def test_an_intact_sidecar_pre_fills_the_form_without_a_notice(project):
    data = _place(project, "analysis")
    user_response.write(project, f"{REPORTS}/final-report-analysis-001.md", '{"Q2": "only /health"}')
    view = views.render_view(project, str(data))
    text = view.output.read_text()
    assert view.recorded_refused is None and 'id="recorded-refused"' not in text
    assert _meta(text)["recorded"]["answers"][0]["answer"] == "only /health" and "Recorded answer (the user)" in text
