// The audit console's few behaviours: scroll each document to its evidence, replay, post a review.
"use strict";
(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;

  function post(url, body) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: body === undefined ? "" : JSON.stringify(body),
    }).then(function (reply) {
      return reply.json().then(function (data) { return { ok: reply.ok, data: data }; });
    });
  }

  function say(target, text) { target.textContent = text; }

  // Stored text as the server shows it (tools/printable.py): controls and bidi characters as escapes.
  const CONTROL_AND_BIDI = /(?![\n\r\t])[\u0000-\u001f\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
  function printable(text) {
    return String(text).replace(CONTROL_AND_BIDI, function (c) {
      return "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0");
    });
  }

  function cell(row, text, name) {
    const td = document.createElement("td");
    if (name) { td.className = name; }
    td.textContent = printable(text || "");
    row.appendChild(td);
    return td;
  }

  // A review just posted, as the last row of the run's review history (it stands now).
  function addReview(record) {
    const rows = document.getElementById("review-rows");
    rows.querySelectorAll("tr.none").forEach(function (row) { row.remove(); });
    rows.querySelectorAll("tr.stands").forEach(function (row) { row.classList.remove("stands"); });
    rows.querySelectorAll(".stands-mark").forEach(function (mark) { mark.remove(); });
    const row = document.createElement("tr");
    row.className = "review stands";
    cell(row, record.created_at.slice(0, 19).replace("T", " "));
    cell(row, record.verdict.replace(/_/g, " ") + " (stands)", "verdict");
    cell(row, record.reviewer || "-", "reviewer");
    cell(row, record.doc_id, "doc");
    cell(row, record.note, "note");
    rows.appendChild(row);
  }

  document.querySelectorAll(".doc").forEach(function (box) {
    const mark = box.querySelector("mark");
    if (mark) { box.scrollTop = Math.max(0, mark.offsetTop - box.offsetTop - 40); }
  });

  const logout = document.getElementById("logout-form");
  if (logout) {
    logout.addEventListener("submit", function (event) {
      event.preventDefault();
      post("/audit/logout").finally(function () { window.location.assign("/audit/login"); });
    });
  }

  const replay = document.getElementById("replay");
  if (replay) {
    replay.addEventListener("click", function () {
      const out = document.getElementById("replay-result");
      say(out, "Replaying…");
      replay.disabled = true;
      post("/audit/runs/" + replay.dataset.runId + "/replay").then(function (r) {
        if (!r.ok) { say(out, "Replay failed: " + (r.data.detail || r.data.title)); return; }
        say(out, r.data.identical ? "Replay: identical (" + r.data.replayed_status + ")"
          : "Replay diverges: " + r.data.divergence);
        out.dataset.identical = String(r.data.identical);
      }).catch(function (e) { say(out, "Replay failed: " + e); }).finally(function () { replay.disabled = false; });
    });
  }

  const form = document.getElementById("feedback-form");
  if (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      const out = document.getElementById("feedback-result");
      const data = new FormData(form);
      const body = { verdict: data.get("verdict") };
      if (data.get("doc_id")) { body.doc_id = data.get("doc_id"); }
      if (data.get("note")) { body.note = data.get("note"); }
      post("/audit/runs/" + form.dataset.runId + "/feedback", body).then(function (r) {
        if (!r.ok) { say(out, "Not stored: " + (r.data.detail || r.data.title)); return; }
        say(out, "Stored: " + r.data.verdict + " (record " + r.data.seq + ")");
        addReview(r.data);
      }).catch(function (e) { say(out, "Not stored: " + e); });
    });
  }
})();
