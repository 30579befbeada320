/* okstra user-response sidecar: the browser twin of lib/okstra/report/sidecar.py `serialize`.
 *
 * okstraSerializeSidecar(obj) returns exactly the text the Python serializer writes for the
 * same values (tests/unit/report/test_sidecar_js.py checks it with node; the HTML view's
 * Export button is checked in a real browser). Plain ES2017, no modules, no dependencies.
 *
 * obj = {
 *   meta: {taskKey, taskType, reportNumber, runId, sourceReport, createdAt},
 *   answers: [{questionId, question, answer, recordedBy}],   // recordedBy: "user" | "relayed-by-lead"
 *   planDecision: {status, option, reason, planSha256?} | null,   // planSha256: the plan data the page showed
 *   analysisReview: {status, notes} | null,
 *   directionSelection: {optionId, optionName, notes} | null,
 *   reportAuthoring: {status, reason} | null
 * }
 * Invalid values throw an Error naming the field (the Python side refuses the same ones).
 * Format: docs/user-response-format.md.
 */
var OKSTRA_SIDECAR_FORMAT_LINE = "<!-- okstra user-response 1.1; format: docs/user-response-format.md -->";

function okstraSidecarQuote(value) {
  var out = "\"";
  for (var i = 0; i < value.length; i++) {
    var c = value.charCodeAt(i);
    var ch = value.charAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < value.length) {
      var d = value.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) { out += ch + value.charAt(i + 1); i++; continue; }
    }
    if (ch === "\"") out += "\\\"";
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029 || (c >= 0xd800 && c <= 0xdfff)) {
      out += "\\u" + ("0000" + c.toString(16)).slice(-4);
    } else out += ch;
  }
  return out + "\"";
}

function okstraSidecarNormaliseOptionId(value) {
  var text = value.replace(/^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g, "").replace(/[ \t\n\r\f\v_]+/g, "-");
  return text.replace(/[a-z]/g, function (c) { return c.toUpperCase(); });
}

function okstraSidecarNormaliseName(value) {
  return value.replace(/^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g, "").replace(/[ \t\n\r\f\v]+/g, " ");
}

/* The download name, as lib/okstra/run/layout.py RunLayout.sidecar names it. */
function okstraSidecarFileName(meta) {
  var num = String(meta.reportNumber);
  while (num.length < 3) num = "0" + num;
  return "user-response-" + meta.taskType + "-" + num + ".md";
}

function okstraSerializeSidecar(obj) {
  function fail(field, message) { throw new Error("okstraSerializeSidecar: " + field + ": " + message); }
  function isBlank(v) { return v.replace(/^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g, "") === ""; }
  function str(v, field, opts) {
    opts = opts || {};
    if (v === undefined) v = null;
    if (v === null && opts.optional) return null;
    if (typeof v !== "string") fail(field, "expected a string, got " + (v === null ? "null" : typeof v));
    if (opts.nonblank && isBlank(v)) fail(field, "must not be empty");
    return v;
  }
  function match(v, re, field) {
    str(v, field);
    if (!re.test(v)) fail(field, JSON.stringify(v) + " is not valid");
    return v;
  }
  function status(v, allowed, field) {
    str(v, field);
    if (allowed.indexOf(v) < 0) fail(field, JSON.stringify(v) + " is not one of " + allowed.join(", "));
    return v;
  }
  function object(v, field, keys, required) {
    if (v === null || typeof v !== "object" || Array.isArray(v)) fail(field, "expected an object");
    Object.keys(v).forEach(function (k) { if (keys.indexOf(k) < 0) fail(field, "unknown field " + k); });
    required.forEach(function (k) { if (!(k in v)) fail(field, "missing field " + k); });
    return v;
  }
  function optionId(v, field) {
    str(v, field);
    return match(okstraSidecarNormaliseOptionId(v), /^[A-Z][A-Z0-9-]{0,15}$/, field);
  }
  function value(v) { return v === null ? "null" : (typeof v === "number" ? String(v) : okstraSidecarQuote(v)); }
  function fields(names, values) {
    return names.map(function (n, i) { return "- " + n + ": " + value(values[i]); });
  }

  object(obj, "export object", ["meta", "answers", "planDecision", "analysisReview", "directionSelection", "reportAuthoring"], ["meta", "answers"]);
  var metaKeys = ["taskKey", "taskType", "reportNumber", "runId", "sourceReport", "createdAt"];
  var m = object(obj.meta, "meta", metaKeys, metaKeys);
  match(m.taskKey, /^[a-z0-9][a-z0-9._-]{0,63}\/[a-z0-9][a-z0-9._-]{0,63}$/, "task-key");
  match(m.taskType, /^[a-z][a-z0-9-]{0,63}$/, "task-type");
  if (typeof m.reportNumber !== "number" || !Number.isInteger(m.reportNumber) || m.reportNumber < 1 || m.reportNumber > 999999) {
    fail("report-number", "not a whole number from 1");
  }
  match(m.runId, /^[a-z0-9][a-z0-9_-]{0,199}(\.[a-z0-9_-]+)*$/, "run-id");
  str(m.sourceReport, "source-report", {nonblank: true});
  str(m.createdAt, "created-at", {nonblank: true});

  var num = String(m.reportNumber);
  while (num.length < 3) num = "0" + num;
  var lines = ["# User response: " + m.taskType + " report " + num, "", OKSTRA_SIDECAR_FORMAT_LINE, ""];
  lines = lines.concat(fields(["task-key", "task-type", "report-number", "run-id", "source-report", "created-at"],
    [m.taskKey, m.taskType, m.reportNumber, m.runId, m.sourceReport, m.createdAt]));
  lines.push("", "## ANSWERS");

  if (!Array.isArray(obj.answers)) fail("answers", "expected a list");
  var seen = {};
  obj.answers.forEach(function (raw, i) {
    var keys = ["questionId", "question", "answer", "recordedBy"];
    var a = object(raw, "answers[" + i + "]", keys, keys);
    match(a.questionId, /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "question id");
    if (Object.prototype.hasOwnProperty.call(seen, a.questionId)) fail("question id", JSON.stringify(a.questionId) + " is answered twice");
    seen[a.questionId] = true;
    str(a.question, a.questionId + ": question");
    str(a.answer, a.questionId + ": answer");
    status(a.recordedBy, ["user", "relayed-by-lead"], a.questionId + ": recorded-by");
    lines.push("", "### " + a.questionId, "");
    lines = lines.concat(fields(["question", "answer", "recorded-by"], [a.question, a.answer, a.recordedBy]));
  });

  function block(name, names, values) {
    lines.push("", "## " + name, "");
    lines = lines.concat(fields(names, values));
  }
  var pd = obj.planDecision, ar = obj.analysisReview, ds = obj.directionSelection, ra = obj.reportAuthoring;
  if (pd !== undefined && pd !== null) {
    object(pd, "planDecision", ["status", "option", "reason", "planSha256"], ["status"]);
    var st = status(pd.status, ["approved", "revision-requested", "rejected"], "plan decision status");
    var opt = str(pd.option, "plan decision option", {optional: true});
    if (opt !== null) opt = optionId(opt, "plan decision option");
    if (st === "approved" && opt === null) fail("plan decision option", "an approved plan must name the option it approves");
    var reason = str(pd.reason, "plan decision reason", {optional: true});
    if (st !== "approved" && (reason === null || isBlank(reason))) fail("plan decision reason", "required when the status is " + st);
    var sha = str(pd.planSha256, "plan decision plan-sha256", {optional: true});
    if (sha !== null) match(sha, /^[0-9a-f]{64}$/, "plan decision plan-sha256");
    if (sha === null) block("PLAN DECISION", ["status", "option", "reason"], [st, opt, reason]);
    else block("PLAN DECISION", ["status", "option", "reason", "plan-sha256"], [st, opt, reason, sha]);
  }
  if (ar !== undefined && ar !== null) {
    object(ar, "analysisReview", ["status", "notes"], ["status"]);
    var rs = status(ar.status, ["accepted", "changes-requested"], "analysis review status");
    var notes = str(ar.notes, "analysis review notes", {optional: true});
    if (rs === "changes-requested" && (notes === null || isBlank(notes))) fail("analysis review notes", "required when the status is changes-requested");
    block("ANALYSIS REVIEW", ["status", "notes"], [rs, notes]);
  }
  if (ds !== undefined && ds !== null) {
    object(ds, "directionSelection", ["optionId", "optionName", "notes"], ["optionId", "optionName"]);
    var id = optionId(ds.optionId, "direction selection option id");
    var name = okstraSidecarNormaliseName(str(ds.optionName, "direction selection option name", {nonblank: true}));
    var dnotes = str(ds.notes, "direction selection notes", {optional: true});
    block("DIRECTION SELECTION", ["option-id", "option-name", "notes"], [id, name, dnotes]);
  }
  if (ra !== undefined && ra !== null) {
    object(ra, "reportAuthoring", ["status", "reason"], ["status", "reason"]);
    var as = status(ra.status, ["approved", "denied"], "report authoring status");
    var areason = str(ra.reason, "report authoring reason", {nonblank: true});
    block("REPORT AUTHORING", ["status", "reason"], [as, areason]);
  }
  return lines.join("\n") + "\n";
}
