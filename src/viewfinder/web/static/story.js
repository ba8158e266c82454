// A story under review: the viewer, the thread panel, decisions and the keyboard.
import { attempt, refresh, send, toast } from "./api.js";
import { bindKeys } from "./keys.js";
import { Marks } from "./marks.js";
import { bindThreads } from "./threads.js";
import { Viewer } from "./viewer.js";

const data = JSON.parse(document.getElementById("story-data").textContent);
const root = document.getElementById("viewer");
const MODES = ["side", "overlay", "swipe", "diff", "changes"];

// The address always says what is on screen, so it can be pasted into a pull request.
function remember() {
  const url = new URL(location.href);
  url.searchParams.set("mode", viewer.mode);
  if (marks.selected) url.searchParams.set("thread", marks.selected);
  else url.searchParams.delete("thread");
  history.replaceState(null, "", url);
  for (const link of document.querySelectorAll(".story-nav a")) {
    const target = new URL(link.href);
    target.searchParams.set("mode", viewer.mode);
    link.href = target.pathname + target.search;
  }
}

function select(id, reveal) {
  marks.selected = id;
  for (const item of document.querySelectorAll(".thread[data-thread]")) {
    if (item.dataset.thread === id) item.setAttribute("aria-current", "true");
    else item.removeAttribute("aria-current");
  }
  const marker = marks.markers.find((m) => m.id === id);
  if (reveal && marker?.anchor) {
    const a = marker.anchor;
    const point = a.type === "path" ? a.points[0] : a;
    viewer.reveal(marker.side, point.x, point.y);
  }
  document.getElementById(`thread-${id}`)?.scrollIntoView({ block: "nearest" });
  viewer.applyScale();
  remember();
}
select.current = data.thread;

const marks = new Marks(data, {
  onPick: (id) => select(id, false),
  onDraw: (side, anchor) => threads.open(side, anchor),
});
const viewer = new Viewer(root, data, (...args) => marks.draw(...args));

async function reload(selectId) {
  const fresh = await refresh(["threads", "decision", "facts"]);
  if (!fresh) return;
  const next = JSON.parse(fresh.getElementById("story-data").textContent);
  marks.markers = next.markers;
  data.markers = next.markers;
  if (selectId !== undefined) marks.selected = selectId;
  select(marks.selected, false);
}

const threads = bindThreads({ diffId: data.diffId, reload, marks, viewer, select });

function showMode(mode) {
  const link = document.querySelector(`.modes a[data-mode="${mode}"]`);
  if (!link && mode !== "image") return;
  for (const a of document.querySelectorAll(".modes a")) {
    if (a.dataset.mode === mode) a.setAttribute("aria-current", "true");
    else a.removeAttribute("aria-current");
  }
  for (const part of document.querySelectorAll("[data-for]")) part.hidden = part.dataset.for !== mode;
  viewer.show(mode);
  remember();
}

async function decide(decision) {
  const button = document.querySelector(`[data-decide="${decision}"]`);
  if (!button) return;
  if (button.disabled) {
    toast(document.getElementById("blocked-reason")?.textContent ?? "Not possible now.", true);
    return;
  }
  const result = await attempt(() => send("POST", `/ui/api/diffs/${data.diffId}/review`, { decision }));
  if (result) {
    toast(result.message);
    await reload();
  }
}

document.addEventListener("click", async (event) => {
  const t = event.target;
  const mode = t.closest(".modes a[data-mode]");
  if (mode) {
    event.preventDefault();
    showMode(mode.dataset.mode);
    return;
  }
  const zoom = t.closest("[data-zoom]");
  if (zoom) viewer.zoom(zoom.dataset.zoom);
  const change = t.closest("[data-change]");
  if (change) viewer.step(Number(change.dataset.change));
  const decideButton = t.closest("[data-decide]");
  if (decideButton) decide(decideButton.dataset.decide);
  if (t.closest("[data-approve]")) {
    const result = await attempt(() => send("POST", `/ui/api/diffs/${data.diffId}/approve`));
    if (result) {
      toast(result.message);
      await reload();
    }
  }
  if (t.closest("[data-help]")) document.getElementById("keys-help").showModal();
});

document.getElementById("opacity")?.addEventListener("input", (e) => viewer.setOpacity(e.target.value / 100));
document.getElementById("swipe")?.addEventListener("input", (e) => viewer.setSwipe(e.target.value / 100));

function useTool(tool) {
  const radio = document.querySelector(`input[name=tool][value=${tool}]`);
  if (!radio) return;
  radio.checked = true;
  marks.tool = tool;
  if (tool !== "select" && viewer.mode !== "side" && viewer.mode !== "image") showMode("side");
  else viewer.applyScale();
}
for (const radio of document.querySelectorAll("input[name=tool]")) {
  radio.addEventListener("change", () => useTool(radio.value));
}

const go = (url) => url && location.assign(`${url}?mode=${viewer.mode}`);
bindKeys({
  j: () => go(data.next),
  k: () => go(data.previous),
  a: () => decide("accept"),
  d: () => decide("deny"),
  i: () => decide("ignore"),
  n: () => viewer.mode === "changes" && viewer.step(1),
  p: () => viewer.mode === "changes" && viewer.step(-1),
  "+": () => viewer.zoom("in"),
  "=": () => viewer.zoom("in"),
  "-": () => viewer.zoom("out"),
  0: () => viewer.zoom("fit"),
  v: () => useTool("select"),
  c: () => useTool("comment"),
  f: () => useTool("path"),
  "?": () => {
    const help = document.getElementById("keys-help");
    if (help.open) help.close();
    else help.showModal();
  },
  ...Object.fromEntries(MODES.map((m, i) => [String(i + 1), () => showMode(m)])),
  Escape: () => threads.close(),
});

showMode(data.mode);
if (data.thread) select(data.thread, true);
document.body.dataset.ready = "story"; // for tests: the keys and the viewer are wired
