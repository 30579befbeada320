/* The HTML view's Export user response form (DESIGN §9). Inlined into the page by
 * lib/okstra/report/views.py after templates/views/sidecar.js, whose
 * okstraSerializeSidecar(obj) writes the sidecar bytes (the same as the Python
 * serializer). Reads the run metadata from the okstra-meta JSON block; sends
 * nothing anywhere: the sidecar is downloaded through a Blob URL. Plain ES2017. */
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
      obj.planDecision = {status: value("plan-status"), option: orNull(value("plan-option")), reason: orNull(value("plan-reason"))};
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

  el("export-button").addEventListener("click", function () {
    el("export-error").textContent = "";
    el("export-status").textContent = "";
    var text;
    try {
      text = okstraSerializeSidecar(exportObject());
    } catch (err) {
      el("export-error").textContent = String(err.message || err).replace(/^okstraSerializeSidecar: /, "");
      return;
    }
    download(text, meta.sidecarName);
    el("export-status").textContent = "Downloaded " + meta.sidecarName + ".";
  });
}());
