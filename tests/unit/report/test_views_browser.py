"""The HTML view in a real browser (DESIGN §9, §14): the Export button writes the same bytes as
the Python serializer, report text never runs as script, and the page makes no network request.

Drives the system chromium (/usr/bin/chromium) through playwright's Python package; no browser
is downloaded. A missing chromium or playwright is a failure, not a skip.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from fixtures.reports import reportfix
from okstra.core import seal
from okstra.report import sidecar, user_response, views

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
HOSTILE = '<script>window.__okstraPwned = 1; alert("pwned")</script><img src=x onerror="window.__okstraPwned = 2">'
MULTILINE = (
    'First line\n# not a heading\n> not a quote\n- not a field: "x"\n\n## PLAN DECISION\nÜñïçødé 한국어 🚀 <b>bold?</b> & done'
)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: run make deps"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


REPORT = ".okstra/runs/feature--rate-limit--r002/reports/final-report-implementation-planning-001.md"
JS_LINK = '[click me](javascript:window.__okstraPwned=3) <a href="javascript:window.__okstraPwned=4">a</a>'
MARKDOWN = "Uses `app.dispatch` and **bold** text, [the docs](https://example.com/x) and " + JS_LINK


def _report(project: Path) -> Path:
    doc = reportfix.example("implementation-planning")
    doc["openQuestions"] = [
        {"id": "Q1", "question": "Default limit for authenticated keys?", "context": "p99 is 140/min", "kind": "free-text"},
        {
            "id": "Q2",
            "question": "Limit per key or per IP?",
            "kind": "choice",
            "options": ["per API key", "per client IP", "both"],
        },
        {"id": "Q3", "question": "Left unanswered?", "kind": "free-text"},
        {"id": "Q4", "question": f"Is {HOSTILE} escaped in questions?", "kind": "free-text"},
    ]
    doc["findings"].append(
        {
            "id": "F2",
            "title": f"Title {HOSTILE}",
            "severity": "high",
            "summary": f"Summary {HOSTILE}",
            "evidence": [{"path": "a<script>.py", "quote": HOSTILE, "note": HOSTILE}],
        }
    )
    doc["findings"].append({"id": "F3", "title": "Markdown", "severity": "low", "summary": MARKDOWN, "evidence": []})
    evil = f"{HOSTILE} {JS_LINK}"
    doc["aiHandoffSummary"] = evil
    doc["openQuestions"][0]["context"] = evil
    doc["openQuestions"][1]["options"].append(evil)
    for option in doc["implementationPlanning"]["implementationOptions"]:
        option["summary"] = evil
        option["pros"] = [evil]
        option["cons"] = [evil]
    doc["findings"][0]["evidence"][0]["note"] = evil
    doc["decisionsRequired"] = {"planDecision": True, "analysisReview": True, "directionSelection": True, "reportAuthoring": True}
    data = reportfix.place(
        project, ".okstra/runs/feature--rate-limit--r002/reports/final-report-implementation-planning-001.data.json", doc
    )
    return views.render_view(project, str(data)).output


@pytest.fixture
def page(browser, project):
    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    page.requests = []
    page.dialogs = []
    page.on("request", lambda r: page.requests.append(r.url))
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))

    def refuse(route):
        if route.request.url.startswith(("file:", "blob:", "data:")):
            route.continue_()
        else:
            route.abort()

    context.route("**/*", refuse)
    page.goto(_report(project).as_uri())
    yield page
    context.close()


def _export(page) -> tuple[str, bytes]:
    with page.expect_download() as info:
        page.click("#export-button")
    download = info.value
    assert page.locator("#export-error").inner_text() == ""
    return download.suggested_filename, Path(download.path()).read_bytes()


def test_export_writes_the_same_bytes_as_the_python_serializer(page, project):
    page.fill("#answer-Q1", MULTILINE)
    page.select_option("#answer-Q2", "per client IP")
    page.fill("#answer-Q4", "<script>alert(1)</script>")
    page.select_option("#plan-status", "approved")
    page.select_option("#plan-option", "B")
    page.fill("#plan-reason", "Simpler.\n- two commands\n# enough")
    page.select_option("#review-status", "changes-requested")
    page.fill("#review-notes", "Check /health > 90/min\r\nthen retry")
    page.select_option("#direction-option", "A")
    page.fill("#direction-notes", "  keep the Lua script small  ")
    page.select_option("#authoring-status", "approved")
    page.fill("#authoring-reason", "Fine — the report-writer is rate limited.")
    name, got = _export(page)
    assert name == "user-response-implementation-planning-001.md"

    created_at = sidecar.parse(got.decode("utf-8"), name).meta.created_at
    assert len(created_at) == 20 and created_at.endswith("Z")
    meta = sidecar.SidecarMeta(
        "feature/rate-limit",
        "implementation-planning",
        1,
        "feature--rate-limit--r002",
        ".okstra/runs/feature--rate-limit--r002/reports/final-report-implementation-planning-001.md",
        created_at,
    )
    expected = sidecar.Responses(
        meta,
        (
            sidecar.Answer("Q1", "Default limit for authenticated keys?", MULTILINE, sidecar.USER),
            sidecar.Answer("Q2", "Limit per key or per IP?", "per client IP", sidecar.USER),
            sidecar.Answer("Q4", f"Is {HOSTILE} escaped in questions?", "<script>alert(1)</script>", sidecar.USER),
        ),
        # The decision names the plan data the page showed (DESIGN §9).
        plan_decision=sidecar.PlanDecision("approved", "B", "Simpler.\n- two commands\n# enough", _data_sha256(project)),
        analysis_review=sidecar.AnalysisReview("changes-requested", "Check /health > 90/min\nthen retry"),
        direction_selection=sidecar.DirectionSelection(
            "A", "Token bucket in Redis (Lua script)", "  keep the Lua script small  "
        ),
        report_authoring=sidecar.ReportAuthoring("approved", "Fine — the report-writer is rate limited."),
    )
    assert got == sidecar.serialize(expected).encode("utf-8")
    assert page.dialogs == []


def _data_sha256(project):
    data = project / ".okstra/runs/feature--rate-limit--r002/reports/final-report-implementation-planning-001.data.json"
    return hashlib.sha256(data.read_bytes()).hexdigest()


def test_an_empty_form_is_not_exported(page):
    downloads = []
    page.on("download", lambda d: downloads.append(d))
    page.click("#export-button")
    assert "Nothing to export" in page.locator("#export-error").inner_text()
    page.wait_for_timeout(200)
    assert downloads == []


def test_export_then_import_gives_the_serializers_bytes_and_the_page_names_the_command(page, project):
    page.fill("#answer-Q1", MULTILINE)
    page.select_option("#plan-status", "approved")
    page.select_option("#plan-option", "A")
    name, got = _export(page)
    command = page.locator("#import-command").inner_text()
    assert command == f"user-response-import --from-downloads --report {REPORT}"
    assert command in page.locator("#export-status").inner_text()
    exported = project.parent / "Downloads" / name
    exported.parent.mkdir(exist_ok=True)
    exported.write_bytes(got)
    ref = user_response.load_report(project, REPORT)
    user_response.import_export(project, exported, name, REPORT, sidecar.USER)
    on_disk = ref.sidecar.read_text(encoding="utf-8")  # the export's bytes, sealed by okstra's writer
    assert seal.seal_text(got.decode("utf-8")) == on_disk
    assert got == sidecar.serialize(sidecar.parse(got.decode("utf-8"), name)).encode("utf-8")
    assert sidecar.parse(on_disk, name).answer("Q1").answer == MULTILINE


def test_an_invalid_decision_is_refused_on_the_page_without_a_download(page):
    page.select_option("#plan-status", "rejected")  # a rejection needs a reason
    downloads = []
    page.on("download", lambda d: downloads.append(d))
    page.click("#export-button")
    assert "plan decision reason" in page.locator("#export-error").inner_text()
    page.wait_for_timeout(200)
    assert downloads == []


def test_a_script_in_a_finding_is_shown_as_text_and_never_runs(page):
    assert page.evaluate("window.__okstraPwned") is None
    assert page.dialogs == []
    # text_content: findings far from the screen are not laid out (content-visibility), so innerText is empty
    assert HOSTILE in page.locator("#finding-F2 h3").text_content()
    assert HOSTILE in page.locator("#finding-F2 .text").first.text_content()
    assert page.locator("#finding-F2 script").count() == 0 and page.locator("#finding-F2 img").count() == 0
    assert page.locator("body script").count() == 3  # the metadata block, sidecar.js and the form's script


def test_the_page_makes_no_network_request_and_embeds_its_metadata(page):
    page.fill("#answer-Q1", "x")
    _export(page)
    assert page.requests and all(url.startswith(("file:", "blob:", "data:")) for url in page.requests), page.requests
    meta = json.loads(page.locator("#okstra-meta").text_content())
    assert meta["sidecarName"] == "user-response-implementation-planning-001.md"
    assert meta["sourceDataSha256"] == page.locator("#source-sha256").inner_text()


def test_control_characters_export_the_same_escapes_as_python(page):
    page.fill("#answer-Q1", "tab\tbell\u0007 del\u007f nel\u0085 ls\u2028 end")
    name, got = _export(page)
    parsed = sidecar.parse(got.decode("utf-8"), name)
    assert parsed.answer("Q1").answer == "tab\tbell\u0007 del\u007f nel\u0085 ls\u2028 end"
    assert got == sidecar.serialize(parsed).encode("utf-8")


def test_markdown_renders_and_scripts_and_javascript_links_stay_inert_in_every_field(page):
    f3 = page.locator("#finding-F3")
    assert f3.locator("strong").text_content() == "bold" and f3.locator("code").text_content() == "app.dispatch"
    assert f3.locator("a").count() == 1 and f3.locator("a").get_attribute("href") == "https://example.com/x"
    assert "[click me](javascript:window.__okstraPwned=3)" in f3.text_content()
    hrefs = page.eval_on_selector_all("a[href]", "links => links.map(a => a.getAttribute('href'))")
    assert hrefs and all(h.startswith(("https://", "#")) for h in hrefs), hrefs
    for where in ("#handoff", "#implementation-options", "#question-Q1", "#finding-F1"):
        assert HOSTILE in page.locator(where).text_content(), where
        assert page.locator(f"{where} script, {where} img").count() == 0, where
    for text in page.locator("p:has-text('click me'), li:has-text('click me'), div.md:has-text('click me')").all():
        if text.is_visible():
            text.click()
    assert page.evaluate("window.__okstraPwned") is None and page.dialogs == []
    assert page.locator("body script").count() == 3


def test_dark_mode_recolours_the_page_and_print_hides_the_form(page):
    page.emulate_media(color_scheme="dark")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(13, 17, 23)"
    page.emulate_media(color_scheme="light")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(255, 255, 255)"
    page.emulate_media(media="print")
    assert not page.locator("#export-form").is_visible() and not page.locator("#finding-controls").is_visible()
    assert page.locator("#decisions-required").is_visible() and page.locator("#finding-F2").is_visible()
    assert page.locator("#open-questions").is_visible()


def test_findings_filter_by_text_and_severity_and_sort(page):
    page.fill("#finding-filter", "markdown")
    assert page.locator("#finding-count").inner_text() == "1 of 3 shown"
    assert page.locator("#finding-F3").is_visible() and not page.locator("#finding-F2").is_visible()
    page.fill("#finding-filter", "")
    page.uncheck(".severity-filter[value=high]")
    assert not page.locator("#finding-F2").is_visible() and page.locator("#finding-count").inner_text() == "2 of 3 shown"
    page.check(".severity-filter[value=high]")
    page.select_option("#finding-sort", "severity")
    order = page.eval_on_selector_all("#finding-list > article", "a => a.map(x => x.id)")
    assert order == ["finding-F2", "finding-F3", "finding-F1"]


def test_the_form_starts_with_what_is_recorded_and_says_who_recorded_it(browser, project):
    _report(project)
    user_response.write(project, REPORT, '{"Q1": "120"}', recorded_by=sidecar.RELAYED_BY_LEAD)
    user_response.write(project, REPORT, '{"Q2": "both"}', plan_decision='{"status": "approved", "option": "B"}')
    output = views.render_view(project, REPORT).output
    context = browser.new_context()
    page = context.new_page()
    page.goto(output.as_uri())
    assert page.input_value("#answer-Q1") == "120" and page.input_value("#answer-Q2") == "both"
    assert page.input_value("#plan-status") == "approved" and page.input_value("#plan-option") == "B"
    assert "Recorded answer (relayed by the lead): 120" in page.locator("#question-Q1").inner_text()
    assert "Recorded answer (the user): both" in page.locator("#question-Q2").inner_text()
    assert "Recorded: approved (B)" in page.locator("#decisions-required").inner_text()
    context.close()
