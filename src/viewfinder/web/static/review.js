// The person's review page of a design checkup: mark a screenshot (an area or a point), verify
// or reopen what the agent resolved, accept a hint, decide. Every action is a REST route of this
// very link (/api/v1/r/{token}/...): the token in the address is the person's sign-in. While the
// tab is visible the page asks the link's small /live route whether anything changed (an ETag
// answered 304 when not), and shows the agent's work without a reload.

import { toast } from "./api.js";
import { clearDrafts, drawable, placeAll } from "./draw.js";

const token = location.pathname.split("/")[2];
const base = `/api/v1/r/${token}`;
const POLL_MS = 4000;

async function post(path, body) {
  const response = await fetch(base + path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body ?? {}),
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new Error(data?.error?.message ?? `the server answered ${response.status}`);
  return data;
}

async function act(path, body, done) {
  try {
    await post(path, body);
    toast(done);
    location.reload();
  } catch (error) {
    toast(error.message, true);
  }
}

let draft = null; // {shot, area?, point?} of the mark being written

function openForm(shot, spot) {
  const form = document.getElementById("mark-form");
  clearDrafts();
  draft = { shot, ...spot };
  form.hidden = false;
  const where = spot?.area ? "an area of" : spot?.point ? "a point on" : "the whole of";
  document.getElementById("mark-where").textContent = `On ${where} screenshot ${shot + 1}.`;
  form.elements.body.focus();
}

function closeForm() {
  const form = document.getElementById("mark-form");
  draft = null;
  if (form) {
    form.hidden = true;
    form.reset();
  }
  clearDrafts();
}

// Zoom: fit the column, or show the pixels at 1x or 2x in a scrolling frame (scroll to pan).
let factor = 0;
function zoom(next) {
  factor = next;
  document.querySelector(".shots")?.classList.toggle("zoomed", factor > 0);
  for (const img of document.querySelectorAll(".shot img")) {
    img.style.width = factor > 0 ? `${img.naturalWidth * factor}px` : "";
  }
  for (const button of document.querySelectorAll("button[data-zoom]")) {
    button.setAttribute("aria-pressed", String(Number(button.dataset.zoom) === factor));
  }
}

// What the page's own elements need; run again after a live update replaced them.
function wire() {
  placeAll();
  for (const shot of document.querySelectorAll(".shot.drawable")) {
    drawable(shot, (spot) => openForm(Number(shot.dataset.shot), spot));
  }
  const form = document.getElementById("mark-form");
  form?.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!draft) return;
    const body = {
      screenshot_index: draft.shot,
      body: form.elements.body.value,
      severity: form.elements.severity.value,
    };
    if (draft.area) body.area = draft.area;
    if (draft.point) body.point = draft.point;
    if (form.elements.suggested_copy.value) body.suggested_copy = form.elements.suggested_copy.value;
    act("/marks", body, "Mark saved");
  });
  const decision = document.getElementById("decision");
  decision?.addEventListener("submit", (event) => {
    event.preventDefault();
    const choice = event.submitter?.value ?? "changes_requested";
    const note = decision.elements.note.value || null;
    act("/decision", { decision: choice, note }, choice === "approved" ? "Approved" : "Changes requested");
  });
  for (const button of document.querySelectorAll("button[data-zoom]")) {
    button.addEventListener("click", () => zoom(Number(button.dataset.zoom)));
  }
}

document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-act]");
  if (!button) return;
  const { act: what, id } = button.dataset;
  if (what === "whole") openForm(Number(button.dataset.shot), null);
  else if (what === "cancel") closeForm();
  else if (what === "verify") act(`/marks/${id}/verify`, {}, "Verified");
  else if (what === "reopen") act(`/marks/${id}/reopen`, {}, "Reopened");
  else if (what === "accept") act(`/hints/${id}/accept`, { severity: "nit" }, "Accepted as a mark");
});

document.addEventListener("keydown", (event) => {
  if (event.target.closest("input, textarea, select, .shot") || event.metaKey || event.ctrlKey) return;
  if (event.key === "+") zoom(2);
  if (event.key === "-") zoom(0);
  if (event.key === "Escape") closeForm();
  const key = { a: "approved", c: "changes_requested" }[event.key];
  const decision = document.getElementById("decision");
  if (key && decision) decision.querySelector(`button[value="${key}"]`).focus();
});
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && event.target.closest(".shot")) closeForm();
});

// ---- live: the agent's work appears while the page is open ----------------------------------

let version = `"${document.querySelector("[data-version]")?.dataset.version ?? ""}"`;
let stale = false; // a newer version waits until the person is not in the middle of writing
let timer = 0;

function writing() {
  const form = document.getElementById("mark-form");
  const note = document.getElementById("decision")?.elements.note;
  return Boolean((form && !form.hidden) || note?.value || document.activeElement?.closest("form"));
}

async function update() {
  const response = await fetch(location.href, { cache: "no-store" });
  if (!response.ok) return false;
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  const main = fresh.getElementById("main");
  if (!main) return false;
  document.getElementById("main").replaceWith(document.adoptNode(main));
  wire();
  zoom(factor);
  return true;
}

async function poll() {
  clearTimeout(timer);
  if (document.visibilityState !== "visible") return; // visibilitychange starts it again
  try {
    const response = await fetch(`${base}/live`, {
      headers: { "If-None-Match": version },
      cache: "no-store",
    });
    if (response.status === 200) {
      const etag = response.headers.get("ETag");
      if (etag && etag !== version) {
        version = etag;
        stale = true;
      }
    }
    if (stale && !writing() && (await update())) {
      stale = false;
      toast("This review was updated");
    }
  } catch {
    // offline for a moment: the next poll tries again
  }
  timer = setTimeout(poll, POLL_MS);
}

document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") poll();
  else clearTimeout(timer);
});

wire();
timer = setTimeout(poll, POLL_MS);
