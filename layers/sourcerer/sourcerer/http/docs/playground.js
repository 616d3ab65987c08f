"use strict";
// Everything here talks to this server's API (the same one the Lambda functions serve). Text from the API is
// always set with textContent, never as HTML.
const $ = (id) => document.getElementById(id);
const REASONS = {
  no_question: "the question was empty",
  no_grounding: "there is nothing to search",
  not_in_sources: "nothing in your documents is about this",
  below_threshold: "the closest passages are not relevant enough",
  unsupported: "your documents do not say this",
  no_citation: "the answer did not cite its sources",
  unfaithful: "a claim was not supported by the source it cited",
  off_topic: "the closest sentence in your documents answers a different question",
};
const VERIFY = { off: false, on: true, partial: "partial", strict: "strict" };
const TEXT_TYPES = /\.(txt|md|markdown|html?|vtt|srt|json|jsonl)$/i;
const uploadedPdfs = {};  // file name (its source_uri) -> bytes, so a cited page can be rendered here
// The key lives in this tab only (sessionStorage, never localStorage): a script that ever ran on this origin
// could read a stored key, and a key kept across browser restarts outlives the person who typed it.
$("key").value = sessionStorage.getItem("sourcerer-key") || "";
$("scope").value = sessionStorage.getItem("sourcerer-scope") || "";
$("key").addEventListener("change", () => sessionStorage.setItem("sourcerer-key", $("key").value.trim()));
$("scope").addEventListener("change", () => sessionStorage.setItem("sourcerer-scope", $("scope").value.trim()));
localStorage.removeItem("sourcerer-key");  // what an older playground left behind
localStorage.removeItem("sourcerer-scope");

// A link from a document's source_uri is followed only when it is relative, http(s) or a #fragment: any
// other scheme (javascript:, data:, vbscript:) would run the document author's code here on a click.
function safeHref(uri) {
  if (!uri) return null;
  if (uri.startsWith("#")) return uri;
  try {
    const url = new URL(uri, window.location.href);  // the browser's own parsing: no scheme trick gets past it
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch (error) {
    return null;
  }
}

// This tab's key, and its scope when one is set: what every call to the API carries.
function authHeaders() {
  const headers = { Authorization: "Bearer " + $("key").value.trim() };
  if ($("scope").value.trim()) headers["X-Sourcerer-Scope"] = $("scope").value.trim();
  return headers;
}

async function api(path, body, method) {
  const headers = authHeaders();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const verb = method || (body === undefined ? "GET" : "POST");
  const response = await fetch(path, { method: verb, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await response.json();
  if (!response.ok) throw new Error(FRIENDLY[response.status] || (data.error && data.error.message) || ("HTTP " + response.status));
  return data;
}

// what an error means for the person at this page, where the API's own message speaks to a program
const FRIENDLY = {
  401: "This needs an API key: paste one above (it starts with sk_). `sourcerer keys create` makes one.",
  402: "Answers need the pro tier: `sourcerer tenants set --tenant … --tier pro` upgrades this tenant.",
  403: "This key may not do that here: check the scope above, or use a key with write permission for uploads.",
};
// what to do about each refusal
const NEXT_STEP = {
  not_in_sources: "Upload the document that answers it.",
  below_threshold: "Ask in the documents' own words, or upload the document that answers it.",
  unsupported: "The documents are on topic but silent on this: add the one that says it.",
  off_topic: "The documents hold the words, not the answer: add the one that answers it.",
  unfaithful: "Check the claims marked ✗ below against their sources.",
  no_citation: "The model did not cite its sources: ask again, or use another model.",
};
function judgeInWords(judge) {
  const [kind, model] = judge.split(":");
  return kind === "local" ? `the local judge (no network; models ${model})` : `the ${model || kind} model`;
}

function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }

async function upload(file) {
  const item = el("li", file.name + ": uploading…");
  $("uploads").appendChild(item);
  try {
    let body;
    if (TEXT_TYPES.test(file.name)) body = { source_uri: file.name, text: await file.text() };
    else {
      const bytes = new Uint8Array(await file.arrayBuffer());
      if (/\.pdf$/i.test(file.name)) uploadedPdfs[file.name] = bytes.slice();
      let binary = ""; for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      body = { source_uri: file.name, content_base64: btoa(binary) };
    }
    const result = await api("/v1/documents", body);
    item.textContent = `${file.name}: ${result.status} (${result.chunks} chunk${result.chunks === 1 ? "" : "s"})`;
    item.className = "ok";
    listDocuments();
    await untilEmbedded(item);
  } catch (error) { item.textContent = `${file.name}: ${error.message}`; item.className = "err"; }
}

// A document is keyword-searchable at once; its meaning (vectors) follows in the background. Say so until done.
async function untilEmbedded(item) {
  const done = item.textContent;
  for (let i = 0; i < 240; i++) {
    const listed = await api("/v1/documents");
    if (!listed.embedding_backlog) { item.textContent = done; item.dataset.ready = "true"; return; }
    item.textContent = `${done}: searchable by keyword now; reading its meaning, ${listed.embedding_backlog} chunks to go…`;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  item.dataset.ready = "true";  // still waiting after two minutes: usable by keyword meanwhile
}
$("files").addEventListener("change", () => { [...$("files").files].forEach(upload); $("files").value = ""; });
$("drop").addEventListener("dragover", (e) => { e.preventDefault(); $("drop").classList.add("over"); });
$("drop").addEventListener("dragleave", () => $("drop").classList.remove("over"));
$("drop").addEventListener("drop", (e) => { e.preventDefault(); $("drop").classList.remove("over"); [...e.dataTransfer.files].forEach(upload); });

// a cue's time as a player shows it: 12:40, or 1:02:30 past the hour (not 62:30)
function clock(ms) {
  const s = Math.floor(ms / 1000), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  const mmss = `${String(m).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
  return h ? `${h}:${mmss}` : mmss;
}

function showSource(citation, hits, chip) {
  document.querySelectorAll(".chip").forEach((c) => c.classList.toggle("active", c === chip));
  const box = $("source"); box.hidden = false; box.textContent = "";
  const loc = citation.locator;
  const where = { char_span: `characters ${loc.start}–${loc.end}`, lines: loc.start === loc.end ? `line ${loc.start}` : `lines ${loc.start}–${loc.end}`,
                  page: `page ${loc.page}`, time_range: `at ${clock(loc.t_start_ms)}–${clock(loc.t_end_ms)}` }[loc.kind];
  const head = el("div", `[${citation.index}] ${citation.label} · ${where} · `, "where");
  // only an absolute http(s) source is a link: a relative one ("drill-review.vtt#t=13") names the document, and
  // resolved against this API server it would be a 404
  const target = /^https?:\/\//i.test(citation.source_uri || "") ? safeHref(citation.source_uri) : null;
  const link = el(target ? "a" : "span", citation.source_uri || "");
  if (target) { link.href = target; link.rel = "noopener noreferrer"; }
  head.appendChild(link);
  box.appendChild(head);
  if (loc.kind === "page" && loc.box) {  // the real page, from the bytes uploaded here or the server's original
    const bytes = originalPdf(citation);
    if (bytes) bytes.then((data) => renderPage(data, loc.page, loc.box, box))
      .catch((error) => { box.insertBefore(pageOutline(loc.box), box.children[1] || null); box.appendChild(el("p", "The page itself cannot be shown: " + error.message, "error")); });
    else box.insertBefore(pageOutline(loc.box), box.children[1] || null);
  }
  const hit = hits.find((h) => h.unit_id === citation.unit_id);
  if (loc.kind === "time_range" && hit && hit.locator.kind === "time_range") box.appendChild(timeline(hit.locator, loc));
  if (loc.kind === "time_range" && hit) {  // the recording itself, when the document names it (metadata.media_url)
    const media = hit.metadata && typeof hit.metadata.media_url === "string" && /^https:\/\//i.test(hit.metadata.media_url) ? safeHref(hit.metadata.media_url) : null;
    if (media) {
      const player = document.createElement("video");  // plays audio too; a media fragment starts it at the cue
      player.controls = true; player.preload = "metadata"; player.className = "player";
      player.src = `${media.split("#")[0]}#t=${loc.t_start_ms / 1000},${loc.t_end_ms / 1000}`;
      box.appendChild(player);
    }
  }
  const text = hit ? hit.text : (citation.quote || "");
  const spans = hit ? citation.quote_spans : [[0, text.length]];
  let at = 0; const body = el("div");
  for (const [start, end] of spans) { body.appendChild(document.createTextNode(text.slice(at, start))); body.appendChild(el("mark", text.slice(start, end))); at = end; }
  body.appendChild(document.createTextNode(text.slice(at)));
  box.appendChild(body);
}

// A transcript chunk's stretch of the recording, with the cited cue marked on it and both times written out.
function timeline(chunk, cited) {
  const span = Math.max(1, chunk.t_end_ms - chunk.t_start_ms);
  const bar = el("div", undefined, "timeline");
  const mark = el("div", undefined, "cited-cue");
  mark.style.left = (100 * (cited.t_start_ms - chunk.t_start_ms) / span) + "%";
  mark.style.width = Math.max(1, 100 * (cited.t_end_ms - cited.t_start_ms) / span) + "%";
  mark.title = `cited: ${clock(cited.t_start_ms)}–${clock(cited.t_end_ms)}`;
  bar.appendChild(mark);
  const wrap = el("div", undefined, "timeline-wrap");
  wrap.appendChild(bar);
  wrap.appendChild(el("div", `${clock(chunk.t_start_ms)} — cited ${clock(cited.t_start_ms)}–${clock(cited.t_end_ms)} — ${clock(chunk.t_end_ms)}`, "timeline-times"));
  return wrap;
}

// A cited PDF's bytes: those uploaded in this tab, else the original the server kept (`citation.original`),
// fetched once per page load with this tab's key.
const originals = {};
function originalPdf(citation) {
  const uploaded = uploadedPdfs[(citation.source_uri || "").split("#")[0]];
  if (uploaded) return Promise.resolve(uploaded);
  const path = (citation.original || "").split("#")[0];
  if (!path.startsWith("/v1/documents/")) return null;
  if (!originals[path]) {
    originals[path] = (async () => {
      const response = await fetch(path, { headers: { ...authHeaders(), Accept: "application/pdf" } });
      if (!response.ok) {
        delete originals[path];
        let message = "HTTP " + response.status;
        try { message = (await response.json()).error.message; } catch (error) { /* not JSON: the status says it */ }
        throw new Error(message);
      }
      return new Uint8Array(await response.arrayBuffer());
    })();
  }
  return originals[path];
}

// Without the page itself (an original not kept): the cited words' box on an outline of a US-letter page.
function pageOutline(cited) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("class", "page"); svg.setAttribute("width", "306"); svg.setAttribute("height", "421");
  svg.setAttribute("viewBox", "0 0 612 842");
  const [x0, y0, x1, y1] = cited;
  const rect = document.createElementNS("http://www.w3.org/2000/svg", "rect");
  rect.setAttribute("x", x0); rect.setAttribute("y", 842 - y1); rect.setAttribute("width", x1 - x0); rect.setAttribute("height", y1 - y0);
  rect.setAttribute("fill", "#ffe58a"); rect.setAttribute("stroke", "#b7791f"); rect.setAttribute("class", "cited-box");
  svg.appendChild(rect);
  return svg;
}

// The cited page at the panel's width (readable), with zoom; the box is drawn in the page's own coordinates,
// whatever its real size (A4, letter, landscape), and scrolled into view.
let pdfZoom = Number(sessionStorage.getItem("sourcerer-zoom")) || 1;
async function renderPage(bytes, number, cited, container) {
  const pdfjs = await import("/docs/pdf.min.mjs");
  pdfjs.GlobalWorkerOptions.workerSrc = "/docs/pdf.worker.min.mjs";
  const pdf = await pdfjs.getDocument({ data: bytes.slice() }).promise;
  const page = await pdf.getPage(number);
  const frame = el("div", undefined, "pdfframe");
  const controls = el("div", undefined, "zoom");
  const smaller = el("button", "−"), larger = el("button", "+"), fit = el("button", "fit width"), level = el("span");
  for (const b of [smaller, larger, fit]) { b.type = "button"; b.className = "small"; }
  smaller.title = "zoom out"; larger.title = "zoom in";
  controls.append(smaller, level, larger, fit);
  const scroller = el("div", undefined, "pdfscroll");
  frame.append(controls, scroller);
  container.insertBefore(frame, container.children[1] || null);
  async function draw() {
    const natural = page.getViewport({ scale: 1 });
    const width = Math.max(300, (scroller.clientWidth || container.clientWidth) - 4);
    const viewport = page.getViewport({ scale: (width / natural.width) * pdfZoom });
    const ratio = window.devicePixelRatio || 1;
    const wrap = el("div", undefined, "pdfpage");
    const canvas = document.createElement("canvas");
    canvas.width = Math.floor(viewport.width * ratio); canvas.height = Math.floor(viewport.height * ratio);
    canvas.style.width = viewport.width + "px"; canvas.style.height = viewport.height + "px";
    wrap.style.width = viewport.width + "px";
    wrap.appendChild(canvas);
    await page.render({ canvasContext: canvas.getContext("2d"), viewport, transform: ratio === 1 ? null : [ratio, 0, 0, ratio, 0, 0] }).promise;
    const [x0, y0, x1, y1] = viewport.convertToViewportRectangle(cited);  // PDF points -> CSS pixels
    const mark = el("div", undefined, "cited-box");
    Object.assign(mark.style, { left: Math.min(x0, x1) + "px", top: Math.min(y0, y1) + "px",
                                width: Math.abs(x1 - x0) + "px", height: Math.abs(y1 - y0) + "px" });
    wrap.appendChild(mark);
    scroller.replaceChildren(wrap);
    level.textContent = ` ${Math.round(pdfZoom * 100)}% `;
    scroller.scrollTop = Math.max(0, Math.min(y0, y1) - 60);
  }
  const zoom = (factor) => { pdfZoom = factor ? Math.min(4, Math.max(0.5, pdfZoom * factor)) : 1; sessionStorage.setItem("sourcerer-zoom", String(pdfZoom)); draw(); };
  smaller.addEventListener("click", () => zoom(1 / 1.25));
  larger.addEventListener("click", () => zoom(1.25));
  fit.addEventListener("click", () => zoom(0));
  await draw();
}

// One card per cited source above the answer: what it is, where, and the words it quotes; a click opens it.
function sourceCards(citations, hits) {
  const row = el("div", undefined, "cards");
  for (const citation of citations) {
    const card = el("button", undefined, "card"); card.type = "button";
    card.appendChild(el("span", `[${citation.index}] `, "card-index"));
    card.appendChild(el("span", citation.label, "card-label"));
    const quote = citation.quote || "";
    if (quote) card.appendChild(el("span", quote.length > 140 ? quote.slice(0, 140) + "…" : quote, "card-quote"));
    card.addEventListener("click", () => {
      const chip = [...document.querySelectorAll("#answer .chip")].find((c) => c.textContent === String(citation.index));
      showSource(citation, hits, chip);
    });
    row.appendChild(card);
  }
  return row;
}

function render(result) {
  const out = $("answer"); out.textContent = ""; $("source").hidden = true;
  const a = result.answer;
  const card = el("div", undefined, "answer" + (a.refused ? " refusal" : ""));
  if (a.refused) {
    card.appendChild(el("strong", "Not answered: "));
    card.appendChild(document.createTextNode((REASONS[a.reason] || a.text) + ". "));
    if (NEXT_STEP[a.reason]) card.appendChild(el("span", NEXT_STEP[a.reason], "next"));
    if (result.hits && result.hits.length) {  // what the documents do say that comes closest
      card.appendChild(el("div", "Closest passages in your documents:", "closest-title"));
      const list = el("ul", undefined, "closest");
      for (const hit of result.hits.slice(0, 3)) {
        const item = el("li");
        item.appendChild(el("strong", hit.label + ": "));
        item.appendChild(document.createTextNode(hit.text.length > 220 ? hit.text.slice(0, 220) + "…" : hit.text));
        list.appendChild(item);
      }
      card.appendChild(list);
    }
  } else {
    const byIndex = Object.fromEntries(a.citations.map((c) => [c.index, c]));
    if (a.citations.length) out.appendChild(sourceCards(a.citations, result.hits));
    // markers become chips; a partial answer's gaps ("[removed: why]") are shown as what they are
    const parts = a.text.split(/(\[\d+\]|\[removed: [^\[\]]*\])/);
    for (const part of parts) {
      const m = part.match(/^\[(\d+)\]$/);
      const gap = part.match(/^\[removed: ([^\[\]]*)\]$/);
      if (gap) {
        const mark = el("span", "removed: " + gap[1], "gap"); mark.title = "an unsupported claim was taken out here";
        card.appendChild(mark);
      } else if (m && byIndex[m[1]]) {
        const chip = el("button", m[1], "chip"); chip.type = "button"; chip.title = byIndex[m[1]].label;
        chip.addEventListener("click", () => showSource(byIndex[m[1]], result.hits, chip));
        card.appendChild(chip);
      } else card.appendChild(document.createTextNode(part));
    }
  }
  if (a.faithfulness) {
    const list = el("ul", undefined, "claims");
    for (const claim of a.faithfulness.claims) list.appendChild(el("li", `${claim.claim} — ${claim.why}`, claim.supported ? "ok" : "bad"));
    card.appendChild(el("div", `Verified by ${judgeInWords(a.faithfulness.judge)}:`)); card.appendChild(list);
    if (a.faithfulness.removed && a.faithfulness.removed.length && !a.refused)
      card.appendChild(el("div", `${a.faithfulness.removed.length} unsupported claim(s) were removed; the rest is supported by its sources.`, "bad"));
    if (a.faithfulness.relevant === false) card.appendChild(el("div", "This does not read as an answer to the question, or the sources hold a better one.", "bad"));
  }
  out.appendChild(card);
}

// The conversation so far, in this tab only: each question is asked with the turns before it (`history`), so a
// follow-up ("and for express?") is searched as the question it stands for (the answer shows the rewrite).
let turns = JSON.parse(sessionStorage.getItem("sourcerer-turns") || "[]");
function showConversation() {
  const box = $("conversation"); box.textContent = "";
  if (!turns.length) return;
  box.appendChild(document.createTextNode(`In a conversation of ${turns.length / 2} question(s): follow-ups keep its topic. `));
  const reset = el("button", "new conversation"); reset.type = "button";
  reset.addEventListener("click", () => { turns = []; sessionStorage.removeItem("sourcerer-turns"); showConversation(); });
  box.appendChild(reset);
}
showConversation();

$("ask").addEventListener("submit", async (e) => {
  e.preventDefault();
  $("answer").textContent = "Thinking…";
  const question = $("q").value;
  try {
    const result = await api("/v1/answer", { q: question, verify: VERIFY[$("verify").value], history: turns.slice(-10) });
    render(result);
    const rewrite = (result.trace.stages || []).find((s) => s.stage === "rewrite");
    if (rewrite && rewrite.detail && rewrite.detail.query !== question)
      $("answer").prepend(el("div", `Searched as: ${rewrite.detail.query}`, "rewrite"));
    if (!result.answer.refused) {
      turns.push({ role: "user", text: question }, { role: "assistant", text: result.answer.text.replace(/\s*\[\d+\]/g, "") });
      sessionStorage.setItem("sourcerer-turns", JSON.stringify(turns.slice(-20)));
    }
    showConversation();
    pastAnswers.unshift({ question, id: result.answer_id, refused: result.answer.refused });
    sessionStorage.setItem("sourcerer-past", JSON.stringify(pastAnswers.slice(0, 50)));
    showPast();
  } catch (error) { $("answer").textContent = ""; $("answer").appendChild(el("p", error.message, "error")); }
});

// Past answers survive a reload (this tab's sessionStorage; the answers themselves are in the server's log): a
// click reads one back, with what the latest audit found, in words.
let pastAnswers = JSON.parse(sessionStorage.getItem("sourcerer-past") || "[]");
const AUDIT_WORDS = {
  not_audited: "not audited yet (`sourcerer audit` or the scheduled audit checks it)",
  ok: "checked: its sources are unchanged and every claim still holds",
  source_changed: "a cited source has changed since: review it",
  source_deleted: "a cited source was deleted since",
  unfaithful: "the judge now rejects a claim",
  error: "could not be checked (it will be retried)",
};
function showPast() {
  const list = $("past"); list.textContent = "";
  for (const item of pastAnswers) {
    const li = el("li", `${item.question} — ${item.refused ? "refused" : "answered"}`);
    li.dataset.answerId = item.id;
    li.addEventListener("click", async () => {
      try {
        const logged = (await api(`/v1/answers/${item.id}`)).answer;
        li.textContent = `${item.question} — ${logged.refused ? "refused" : "answered"}: ${logged.answer || ""} · audit: ${AUDIT_WORDS[logged.audit.status] || logged.audit.status} `;
        for (const cited of logged.citations || []) {  // the log keeps where each citation points, not the text
          const chip = el("button", String(cited.index), "chip"); chip.type = "button"; chip.title = cited.label;
          const original = cited.document_id ? `/v1/documents/${encodeURIComponent(cited.document_id)}/original` : null;
          chip.addEventListener("click", (event) => { event.stopPropagation(); showSource({ ...cited, original, quote: null }, [], chip); });
          li.appendChild(chip);
        }
      } catch (error) { li.appendChild(el("span", " " + error.message, "error")); }
    });
    list.appendChild(li);
  }
}
showPast();

// The documents this key can see, each with a delete button (the same rule as the API: write permission).
async function listDocuments() {
  const list = $("documents");
  if (!$("key").value.trim()) return;
  try {
    const listed = await api("/v1/documents");
    list.textContent = "";
    for (const doc of listed.documents) {
      const item = el("li", doc.source_uri);
      item.dataset.documentId = doc.document_id;
      item.appendChild(el("span", ` — ${doc.chunks} chunk${doc.chunks === 1 ? "" : "s"} in ${doc.scope}${doc.acl.length ? ", for " + doc.acl.join(", ") : ""}`, "meta"));
      const remove = el("button", "delete"); remove.type = "button";
      remove.addEventListener("click", async () => {
        try { await api(`/v1/documents/${encodeURIComponent(doc.document_id)}`, undefined, "DELETE"); listDocuments(); }
        catch (error) { item.appendChild(el("span", " " + error.message, "error")); }
      });
      item.appendChild(remove);
      list.appendChild(item);
    }
    if (!listed.documents.length) list.appendChild(el("li", "none yet", "meta"));
    // the status of embedding: chunks still waiting for their vectors are found by keyword meanwhile
    const backlog = listed.embedding_backlog;
    $("embedding-status").textContent = backlog ? `${backlog} chunk${backlog === 1 ? "" : "s"} waiting for their meaning (vectors): found by keyword meanwhile`
      : (listed.documents.length && backlog === 0 ? "every chunk is searchable by meaning and by keyword" : "");
  } catch (error) { list.textContent = ""; list.appendChild(el("li", error.message, "error")); }
}
$("refresh-docs").addEventListener("click", listDocuments);
$("key").addEventListener("change", () => {  // another key is another reader: its conversation starts afresh
  turns = []; sessionStorage.removeItem("sourcerer-turns"); showConversation(); listDocuments();
  pastAnswers = []; sessionStorage.removeItem("sourcerer-past"); showPast();
});
listDocuments();
