/* The HTML view's behaviour (DESIGN §8, §9). Inlined into the page by
 * lib/okstra/report/views.py after templates/views/sidecar.js, whose
 * okstraSerializeSidecar(obj) writes the sidecar bytes (the same as the Python
 * serializer). Reads the run metadata from the okstra-meta JSON block; sends
 * nothing anywhere: the sidecar is downloaded through a Blob URL. Also: the form
 * starts with what is recorded, an empty form is not exported, the findings
 * filter and sort, the language switch, and printing opens collapsed details.
 * Plain ES2017. */
(function () {
  "use strict";
  var meta = JSON.parse(document.getElementById("okstra-meta").textContent);

  function el(id) { return document.getElementById(id); }
  function value(id) { var node = el(id); return node ? node.value : ""; }
  function blank(text) { return text.replace(/^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g, "") === ""; }
  function orNull(text) { return blank(text) ? null : text; }

  /* Creation time to the second, as the Python side writes it: 2026-11-30T14:05:12Z. */
  function now() { return new Date().toISOString().replace(/\.\d{3}Z$/, "Z"); }

  function optionName(id) {
    for (var i = 0; i < meta.implementationOptions.length; i++) {
      if (meta.implementationOptions[i].id === id) return meta.implementationOptions[i].name;
    }
    return null;
  }

  /* The export object (the shape okstraSerializeSidecar and report.sidecar take). */
  function exportObject() {
    var answers = [];
    meta.openQuestions.forEach(function (q) {
      var answer = value("answer-" + q.id);
      if (!blank(answer)) answers.push({questionId: q.id, question: q.question, answer: answer, recordedBy: "user"});
    });
    var d = meta.decisionsRequired;
    var obj = {
      meta: {
        taskKey: meta.taskKey, taskType: meta.taskType, reportNumber: meta.reportNumber,
        runId: meta.runId, sourceReport: meta.sourceReport, createdAt: now()
      },
      answers: answers, planDecision: null, analysisReview: null, directionSelection: null, reportAuthoring: null
    };
    if (d.planDecision && value("plan-status") !== "") {
      obj.planDecision = {
        status: value("plan-status"), option: orNull(value("plan-option")), reason: orNull(value("plan-reason")),
        planSha256: meta.sourceDataSha256  // the decision is about the plan data this page shows (DESIGN §9)
      };
    }
    if (d.analysisReview && value("review-status") !== "") {
      obj.analysisReview = {status: value("review-status"), notes: orNull(value("review-notes"))};
    }
    if (d.directionSelection && value("direction-option") !== "") {
      var id = value("direction-option");
      obj.directionSelection = {optionId: id, optionName: optionName(id), notes: orNull(value("direction-notes"))};
    }
    if (d.reportAuthoring && value("authoring-status") !== "") {
      obj.reportAuthoring = {status: value("authoring-status"), reason: value("authoring-reason")};
    }
    return obj;
  }

  function download(text, name) {
    var blob = new Blob([text], {type: "text/markdown;charset=utf-8"});
    var url = URL.createObjectURL(blob);
    var link = document.createElement("a");
    link.href = url;
    link.download = name;
    link.style.display = "none";
    document.body.appendChild(link);
    link.click();
    document.body.removeChild(link);
    setTimeout(function () { URL.revokeObjectURL(url); }, 60000);
  }

  function isEmpty(obj) {
    return obj.answers.length === 0 && !obj.planDecision && !obj.analysisReview && !obj.directionSelection && !obj.reportAuthoring;
  }

  el("export-button").addEventListener("click", function () {
    el("export-error").textContent = "";
    el("export-status").textContent = "";
    var obj = exportObject();
    if (isEmpty(obj)) {
      el("export-error").textContent = "Nothing to export: answer a question or make a decision first.";
      return;
    }
    var text;
    try {
      text = okstraSerializeSidecar(obj);
    } catch (err) {
      el("export-error").textContent = String(err.message || err).replace(/^okstraSerializeSidecar: /, "");
      return;
    }
    download(text, meta.sidecarName);
    el("export-status").textContent = "Downloaded " + meta.sidecarName + ". Now run in your terminal: " + meta.importCommand;
  });

  /* Pre-fill the form with what the run's sidecar already holds. */
  function setValue(id, v) { var node = el(id); if (node && v !== null && v !== undefined) node.value = v; }
  var rec = meta.recorded;
  if (rec) {
    rec.answers.forEach(function (a) { setValue("answer-" + a.questionId, a.answer); });
    if (rec.planDecision) { setValue("plan-status", rec.planDecision.status); setValue("plan-option", rec.planDecision.option); setValue("plan-reason", rec.planDecision.reason); }
    if (rec.analysisReview) { setValue("review-status", rec.analysisReview.status); setValue("review-notes", rec.analysisReview.notes); }
    if (rec.directionSelection) { setValue("direction-option", rec.directionSelection.optionId); setValue("direction-notes", rec.directionSelection.notes); }
    if (rec.reportAuthoring) { setValue("authoring-status", rec.reportAuthoring.status); setValue("authoring-reason", rec.reportAuthoring.reason); }
  }

  /* Language switch: the translation or the source report. */
  var switcher = el("language-switch");
  if (switcher) {
    switcher.addEventListener("click", function (event) {
      var target = event.target.getAttribute("data-show");
      if (!target) return;
      ["translation", "source-report"].forEach(function (id) { el(id).hidden = id !== target; });
      Array.prototype.forEach.call(switcher.querySelectorAll("button"), function (b) {
        b.setAttribute("aria-pressed", String(b.getAttribute("data-show") === target));
      });
      document.documentElement.lang = target === "translation" ? meta.reportLanguage : "en";
    });
  }

  /* Findings: filter by severity and text, sort. The text of each finding is read once. */
  var list = el("finding-list");
  if (list) {
    var findings = Array.prototype.slice.call(list.children);
    var texts = null;
    var rank = {critical: 0, high: 1, medium: 2, low: 3, info: 4};
    var idNumber = function (f) { var m = /([0-9]+)$/.exec(f.id); return m ? parseInt(m[1], 10) : 0; };
    var filter = function () {
      var wanted = {};
      Array.prototype.forEach.call(document.querySelectorAll(".severity-filter"), function (box) { wanted[box.value] = box.checked; });
      var query = el("finding-filter").value.trim().toLowerCase();
      if (query && texts === null) texts = findings.map(function (f) { return f.textContent.toLowerCase(); });
      var shown = 0;
      for (var i = 0; i < findings.length; i++) {
        var show = wanted[findings[i].getAttribute("data-severity")] !== false && (!query || texts[i].indexOf(query) >= 0);
        if (findings[i].hidden === show) findings[i].hidden = !show;
        if (show) shown++;
      }
      el("finding-count").textContent = shown + " of " + findings.length + " shown";
    };
    var sort = function () {
      var key = el("finding-sort").value;
      var order = findings.map(function (f, i) { return i; });
      var by = {
        report: function (i) { return parseInt(findings[i].getAttribute("data-order"), 10); },
        severity: function (i) { return rank[findings[i].getAttribute("data-severity")] * 1e7 + idNumber(findings[i]); },
        id: function (i) { return idNumber(findings[i]); }
      }[key];
      if (by) order.sort(function (a, b) { return by(a) - by(b); });
      else {
        var titles = findings.map(function (f) { return f.querySelector("h3").textContent.toLowerCase(); });
        order.sort(function (a, b) { return titles[a] < titles[b] ? -1 : titles[a] > titles[b] ? 1 : 0; });
      }
      var fragment = document.createDocumentFragment();
      var sorted = order.map(function (i) { return findings[i]; });
      sorted.forEach(function (f) { fragment.appendChild(f); });
      list.appendChild(fragment);
      findings = sorted;
      texts = null;
    };
    el("finding-controls").addEventListener("change", function (event) {
      if (event.target.id === "finding-sort") sort(); else filter();
    });
    el("finding-filter").addEventListener("input", filter);
    window.okstraFilterFindings = filter;
  }

  /* Printing shows every finding with its collapsed details open. */
  var opened = [];
  window.addEventListener("beforeprint", function () {
    opened = Array.prototype.filter.call(document.querySelectorAll("details"), function (d) { return !d.open; });
    opened.forEach(function (d) { d.open = true; });
  });
  window.addEventListener("afterprint", function () { opened.forEach(function (d) { d.open = false; }); opened = []; });
}());
