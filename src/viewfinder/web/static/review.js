// The person's review page of a design checkup: draw a mark on a screenshot, verify or reopen
// what the agent resolved, accept a hint, decide. Every action is a REST route of this very
// link (/api/v1/r/{token}/...): the token in the address is the person's sign-in.

import { toast } from "./api.js";

const token = location.pathname.split("/")[2];
const base = `/api/v1/r/${token}`;

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

// Pins are placed from their data (the page's policy allows no inline styles).
for (const box of document.querySelectorAll(".pin-box")) {
  const { x, y, w, h } = box.dataset;
  box.style.left = `${x * 100}%`;
  box.style.top = `${y * 100}%`;
  box.style.width = `${w * 100}%`;
  box.style.height = `${h * 100}%`;
}

const form = document.getElementById("mark-form");
let draft = null; // {shot, area} of the mark being written

function openForm(shot, area) {
  draft = { shot, area };
  form.hidden = false;
  const where = area ? "an area of" : "the whole of";
  document.getElementById("mark-where").textContent = `On ${where} screenshot ${shot + 1}.`;
  form.elements.body.focus();
}

function closeForm() {
  draft = null;
  form.hidden = true;
  form.reset();
  for (const d of document.querySelectorAll(".draft")) d.hidden = true;
}

for (const shot of document.querySelectorAll(".shot.drawable")) {
  const outline = shot.querySelector(".draft");
  let start = null;
  const at = (event) => {
    const r = shot.getBoundingClientRect();
    return {
      x: Math.min(Math.max((event.clientX - r.left) / r.width, 0), 1),
      y: Math.min(Math.max((event.clientY - r.top) / r.height, 0), 1),
    };
  };
  const area = (a, b) => ({
    x: Math.min(a.x, b.x), y: Math.min(a.y, b.y), w: Math.abs(a.x - b.x), h: Math.abs(a.y - b.y),
  });
  const show = (box) => {
    outline.hidden = false;
    outline.style.left = `${box.x * 100}%`;
    outline.style.top = `${box.y * 100}%`;
    outline.style.width = `${box.w * 100}%`;
    outline.style.height = `${box.h * 100}%`;
  };
  shot.addEventListener("pointerdown", (event) => {
    start = at(event);
    shot.setPointerCapture(event.pointerId);
  });
  shot.addEventListener("pointermove", (event) => {
    if (start) show(area(start, at(event)));
  });
  shot.addEventListener("pointerup", (event) => {
    if (!start) return;
    const box = area(start, at(event));
    start = null;
    show(box);
    const tiny = box.w < 0.01 || box.h < 0.01;
    openForm(Number(shot.dataset.shot), tiny ? null : box);
  });
}

form?.addEventListener("submit", (event) => {
  event.preventDefault();
  if (!draft) return;
  const body = {
    screenshot_index: draft.shot,
    body: form.elements.body.value,
    severity: form.elements.severity.value,
  };
  if (draft.area) body.area = draft.area;
  if (form.elements.suggested_copy.value) body.suggested_copy = form.elements.suggested_copy.value;
  act("/marks", body, "Mark saved");
});

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

const decision = document.getElementById("decision");
decision?.addEventListener("submit", (event) => {
  event.preventDefault();
  const choice = event.submitter?.value ?? "changes_requested";
  const note = decision.elements.note.value || null;
  act("/decision", { decision: choice, note }, choice === "approved" ? "Approved" : "Changes requested");
});

// Zoom: fit the column, or show the pixels at 1x or 2x in a scrolling frame (scroll to pan).
function zoom(factor) {
  const shots = document.querySelector(".shots");
  shots.classList.toggle("zoomed", factor > 0);
  for (const img of document.querySelectorAll(".shot img")) {
    img.style.width = factor > 0 ? `${img.naturalWidth * factor}px` : "";
  }
  for (const button of document.querySelectorAll("button[data-zoom]")) {
    button.setAttribute("aria-pressed", String(Number(button.dataset.zoom) === factor));
  }
}
for (const button of document.querySelectorAll("button[data-zoom]")) {
  button.addEventListener("click", () => zoom(Number(button.dataset.zoom)));
}

document.addEventListener("keydown", (event) => {
  if (event.target.closest("input, textarea, select") || event.metaKey || event.ctrlKey) return;
  if (event.key === "+") zoom(2);
  if (event.key === "-") zoom(0);
  if (event.key === "Escape") closeForm();
  const key = { a: "approved", c: "changes_requested" }[event.key];
  if (key && decision) decision.querySelector(`button[value="${key}"]`).focus();
});
