// The labeling page: one question at a time from /api/next, answered by key or button.
// Every text that comes from a response is put in the page with textContent, never as markup.
"use strict";

const $ = (id) => document.getElementById(id);
const video = $("player");
let current = null;   // the question on screen
let busy = false;     // an answer or an undo is on its way: keys wait
let span = null;      // {start, end, still} of the citation playing

const PROMPTS = {
  verifiable: "Is this sentence verifiable?",
  facts: "What are its atomic facts?",
  entailed: "Do the cited segments together support this fact?",
  precise: "Is this citation needed for the fact?",
};

function text(el, value) {
  el.textContent = value == null ? "" : String(value);
  return el;
}

function make(tag, value, cls) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  return text(el, value);
}

function clock(seconds) {
  if (seconds == null) return "?";
  const m = Math.floor(seconds / 60);
  const s = seconds - m * 60;
  const whole = Number.isInteger(s) ? String(s).padStart(2, "0") : s.toFixed(1).padStart(4, "0");
  return `${m}:${whole}`;
}

async function api(path, body) {
  const options = {credentials: "same-origin", cache: "no-store"};
  if (body !== undefined) {
    options.method = "POST";
    options.headers = {"Content-Type": "application/json"};
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  return {ok: response.ok, status: response.status, data};
}

function say(message) {
  text($("status"), message);
}

// ------------------------------------------------------------------ the player

function playSpan() {
  if (!span) return;
  if (video.readyState < 1) {
    video.addEventListener("loadedmetadata", playSpan, {once: true});
    return;
  }
  const last = Math.max(0, (video.duration || 0) - 0.001);
  video.currentTime = Math.min(span.start, last);
  if (span.still) {
    video.pause();
    return;
  }
  const playing = video.play();
  if (playing && playing.catch) {
    playing.catch(() => say("Press space to play the cited segment."));
  }
}

video.addEventListener("timeupdate", () => {
  if (span && !span.still && video.currentTime >= span.end) {
    video.currentTime = span.start;   // loop the cited span
  }
});

function chooseCitation(index) {
  if (!current) return;
  const citations = current.citations;
  if (index < 0 || index >= citations.length) return;
  document.querySelectorAll("#chips button").forEach((b, i) => b.classList.toggle("active", i === index));
  const c = citations[index];
  const info = $("span-info");
  video.pause();
  if (c.start == null) {
    span = null;
    $("audio-only").hidden = true;
    text(info, `${c.raw}: no usable time (${c.error || "unparsed"}); it cannot be played.`);
    return;
  }
  const audio = c.modality === "audio";
  const point = c.start === c.end;
  const end = point ? (audio ? c.start + current.audio_point_window : c.start) : c.end;
  span = {start: c.start, end, still: !audio && point};
  video.muted = !audio;           // a visual citation is watched, an audio one heard
  $("audio-only").hidden = !audio;
  $("screen").classList.toggle("sound-only", audio);
  const how = span.still ? "still frame" : audio ? `sound only, ${clock(span.start)}–${clock(end)}, looping`
    : `muted, ${clock(span.start)}–${clock(end)}, looping`;
  text(info, `${c.modality} ${clock(c.start)}${point ? "" : "–" + clock(c.end)}: ${how}` +
    (c.issue ? ` · ${c.issue} (the scorer counts it unsupported)` : ""));
  playSpan();
}

function showCitations(q) {
  const box = $("chips");
  box.replaceChildren();
  q.citations.forEach((c, i) => {
    const b = make("button", `${i + 1}. ${c.raw}`, "chip");
    b.type = "button";
    if (c.issue) b.classList.add("unusable");
    b.addEventListener("click", () => chooseCitation(i));
    box.append(b);
  });
  const src = q.response.video;
  if (video.getAttribute("src") !== src) {
    video.setAttribute("src", src);
  }
  if (q.citations.length) {
    chooseCitation(q.citation != null ? q.citation : 0);
  } else {
    span = null;
    video.pause();
    $("audio-only").hidden = true;
    text($("span-info"), "This sentence cites nothing.");
  }
}

// ------------------------------------------------------------------ the question

function showResponse(q) {
  const r = q.response;
  text($("question-text"), r.question ? `Question: ${r.question}` : "");
  const options = $("options");
  options.replaceChildren(...(r.options || []).map((o) => make("li", o)));
  const list = $("sentences");
  list.replaceChildren(...r.sentences.map((s, i) => make("li", s, i === q.sentence ? "current" : "")));
  text($("note"), r.note ? `Judge proposals: ${r.note}` : "");
}

function showProposal(q) {
  const el = $("proposal");
  if (q.kind === "facts" || q.proposal == null) {
    text(el, q.kind === "facts" && q.proposal_from === "judge" ? "Proposed by the judge's decomposition." : "");
    return;
  }
  text(el, `The judge says: ${q.proposal ? "yes" : "no"}`);
}

function show(q) {
  current = q;
  document.body.dataset.key = q.key;
  document.body.dataset.kind = q.kind;
  $("player-box").hidden = $("question-box").hidden = false;
  $("done").hidden = true;
  const r = q.response;
  text($("where"), `Response ${r.position} of ${r.of} (${r.id}) · sentence ${q.sentence + 1} of ${r.sentences.length}` +
    (q.citation != null ? ` · citation ${q.citation + 1} of ${q.citations.length}` : ""));
  text($("prompt"), PROMPTS[q.kind]);
  text($("sentence"), r.sentences[q.sentence]);
  text($("fact"), q.fact_text != null ? `Fact: ${q.fact_text}` : "");
  const facts = q.kind === "facts";
  $("facts-editor").hidden = !facts;
  $("yes").hidden = $("no").hidden = facts;
  $("accept").hidden = !facts;
  if (facts) $("facts").value = (q.proposal || []).join("\n");
  else if (document.activeElement === $("facts")) $("facts").blur();  // keys answer again, not type
  showProposal(q);
  showResponse(q);
  showCitations(q);
}

function finished() {
  current = null;
  span = null;
  video.pause();
  document.body.dataset.key = "";
  $("player-box").hidden = $("question-box").hidden = true;
  $("done").hidden = false;
}

async function refreshProgress() {
  const {ok, data} = await api("/api/progress");
  if (!ok || !data) return;
  const bar = $("bar");
  bar.max = Math.max(1, data.total);
  bar.value = data.answered;
  text($("counts"), `${data.answered} of ${data.total} questions · ${data.responses.done} of ` +
    `${data.responses.total} responses · ${data.unsure} unsure`);
  text($("who"), `${data.annotator}${data.show_judge ? " · judge proposals shown" : ""}`);
}

async function load() {
  try {
    const {ok, data} = await api("/api/next");
    if (!ok || !data) {
      say("The server refused the request; reload the page.");
      return;
    }
    if (data.done) finished(); else show(data.question);
    await refreshProgress();
  } catch (e) {
    say("The server is not answering. Every answer so far is saved; reload when it is back.");
  }
  if (!busy) settle();
}

// The page's state for whoever drives it (a test, a script): "question" or "done" only once keys
// are taken again.
function settle() {
  document.body.dataset.state = current ? "question" : "done";
}

async function send(path, body) {
  if (busy) return;
  busy = true;
  document.body.dataset.state = "busy";
  try {
    const {ok, data} = await api(path, body);
    if (!ok) {
      say(data && data.error ? data.error : "The answer was refused.");
      return;
    }
    say(path === "/api/undo" ? (data.undone ? "Undone." : "Nothing to undo.") : "");
    await load();
  } catch (e) {
    say("The server is not answering. Every answer so far is saved; reload when it is back.");
  } finally {
    busy = false;
    settle();
  }
}

function answer(value) {
  if (!current) return;
  if (current.kind === "facts" && value !== "unsure") {
    const facts = $("facts").value.split("\n").map((f) => f.trim()).filter((f) => f);
    send("/api/answer", {key: current.key, answer: facts});
    return;
  }
  if (current.kind !== "facts" || value === "unsure") send("/api/answer", {key: current.key, answer: value});
}

// ------------------------------------------------------------------ keys and buttons

function toggle(id) {
  const el = $(id);
  el.hidden = !el.hidden;
  if (id === "agreement" && !el.hidden) loadAgreement();
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const editing = event.target === $("facts") && current && current.kind === "facts";
  if (editing) {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      answer(null);
    } else if (event.key === "Escape") {
      $("facts").blur();
    }
    return;
  }
  const key = event.key;
  const yesNo = current && current.kind !== "facts";
  let handled = true;
  if (key === "y" && yesNo) answer(true);
  else if (key === "n" && yesNo) answer(false);
  else if (key === "u" && current) answer("unsure");
  else if (key === "z") send("/api/undo", {});
  else if (key === "Enter" && current && current.kind === "facts") answer(null);
  else if (key === "e" && current && current.kind === "facts") $("facts").focus();
  else if (key === " ") { if (video.paused) playSpan(); else video.pause(); }
  else if (key === "ArrowLeft") video.currentTime = Math.max(0, video.currentTime - 1);
  else if (key === "ArrowRight") video.currentTime = Math.min(video.duration || 0, video.currentTime + 1);
  else if (/^[1-9]$/.test(key)) chooseCitation(Number(key) - 1);
  else if (key === "g") toggle("guide");
  else if (key === "a") toggle("agreement");
  else handled = false;
  if (handled) event.preventDefault();
});

$("yes").addEventListener("click", () => answer(true));
$("no").addEventListener("click", () => answer(false));
$("accept").addEventListener("click", () => answer(null));
$("unsure").addEventListener("click", () => answer("unsure"));
$("undo").addEventListener("click", () => send("/api/undo", {}));
$("toggle-guide").addEventListener("click", () => toggle("guide"));
$("toggle-agreement").addEventListener("click", () => toggle("agreement"));

// ------------------------------------------------------------------ agreement

function number(value) {
  return value == null ? "–" : Number(value).toFixed(3);
}

function statRow(label, block) {
  const tr = document.createElement("tr");
  const kappa = block && block.kappa ? block.kappa : {};
  const alpha = block && block.alpha ? block.alpha : {};
  tr.append(make("th", label), make("td", block ? block.n : "–"), make("td", number(kappa.value)),
    make("td", number(alpha.value)), make("td", number(block ? block.accuracy : null)));
  const note = kappa.note || alpha.note;
  if (note) tr.title = note;
  return tr;
}

function comparison(title, result) {
  const box = make("section", "", "comparison");
  box.append(make("h3", title));
  const table = document.createElement("table");
  const head = document.createElement("tr");
  ["subtask", "n", "kappa", "alpha", "accuracy"].forEach((h) => head.append(make("th", h)));
  table.append(head, statRow("verifiable", result.subtask1), statRow("entailed", result.subtask3),
    statRow("citation needed", result.precise));
  box.append(table);
  const s2 = result.subtask2 || {};
  box.append(make("p", `decomposition: fact F1 ${number(s2.f1)} (precision ${number(s2.precision)}, ` +
    `recall ${number(s2.recall)}) over ${s2.n_sentences || 0} sentences`));
  const ms = result.murgat_s || {};
  box.append(make("p", `MURGAT-S: Pearson ${number(ms.pearson)} over ${ms.n || 0} responses`));
  return box;
}

async function loadAgreement() {
  const body = $("agreement-body");
  body.replaceChildren(make("p", "Computing…"));
  try {
    const {ok, data} = await api("/api/agreement");
    if (!ok || !data) {
      body.replaceChildren(make("p", "The agreement could not be computed."));
      return;
    }
    const parts = [];
    const all = data.all_annotators.subtask1.alpha;
    parts.push(make("p", `Annotators: ${data.annotators.join(", ") || "none yet"} · verifiability alpha across ` +
      `all: ${number(all.value)}${all.note ? " (" + all.note + ")" : ""}`));
    data.pairs.forEach((p) => parts.push(comparison(`${p.a} vs ${p.b} (${p.shared} shared)`, p)));
    data.judge.forEach((j) => parts.push(comparison(`judge vs ${j.annotator}`, j)));
    body.replaceChildren(...parts);
  } catch (e) {
    body.replaceChildren(make("p", "The server is not answering."));
  }
}

load();
