// Comment threads drawn on the images: markers of existing threads, and drawing a new anchor
// (click: a point; drag: a rectangle; freehand: a path). Anchors are fractions 0..1 of the
// image they are drawn on, as the server stores them.

const NS = "http://www.w3.org/2000/svg";
const DRAG_PX = 5;
const MAX_POINTS = 1000;

function svg(tag, attrs = {}) {
  const node = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

const round = (v) => Math.round(Math.min(1, Math.max(0, v)) * 10000) / 10000;

export class Marks {
  constructor(data, { onPick, onDraw }) {
    this.markers = data.markers;
    this.selected = data.thread;
    this.canDraw = data.canComment;
    this.tool = "select";
    this.pending = null; // {side, anchor} of a thread being written
    this.onPick = onPick;
    this.onDraw = onDraw;
  }

  // Called by the viewer for each image layer after every render or zoom.
  draw(layer, side, width, height, scale, mode) {
    layer.querySelector("svg.marks")?.remove();
    if (side === "diff") return;
    const drawable = this.canDraw && this.tool !== "select" && (mode === "side" || mode === "image");
    const marks = svg("svg", { class: "marks", viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: "none", "aria-hidden": "true" });
    layer.classList.toggle("drawing", drawable);
    const showHere = mode === "side" || mode === "image" || side === "after";
    if (showHere) {
      for (const m of this.markers) {
        if (m.side === side && m.anchor) marks.append(this.shape(m, width, height, scale));
      }
      if (this.pending?.side === side) {
        marks.append(this.shape({ id: "", n: "+", side, anchor: this.pending.anchor, status: "pending" }, width, height, scale));
      }
    }
    if (drawable) this.listen(marks, side, width, height, scale);
    else marks.addEventListener("click", (event) => {
      const id = event.target.closest("[data-thread]")?.dataset.thread;
      if (id) this.onPick(id);
    });
    layer.append(marks);
  }

  shape(m, width, height, scale) {
    const state = [m.status === "resolved" ? "resolved" : "", m.id && m.id === this.selected ? "selected" : "", m.status === "pending" ? "pending" : ""].join(" ");
    const group = svg("g", m.id ? { "data-thread": m.id } : {});
    const a = m.anchor;
    let lx = a.x * width;
    let ly = a.y * height;
    if (a.type === "rect") {
      const attrs = { x: a.x * width, y: a.y * height, width: Math.max(a.w * width, 1), height: Math.max(a.h * height, 1) };
      group.append(svg("rect", { ...attrs, class: `mark ${state}` }), svg("rect", { ...attrs, class: "hit", "stroke-width": 12 / scale }));
    } else if (a.type === "path") {
      const points = a.points.map((p) => `${p.x * width},${p.y * height}`).join(" ");
      const tag = a.closed ? "polygon" : "polyline";
      group.append(svg(tag, { points, class: `mark ${state}` }), svg(tag, { points, class: "hit", "stroke-width": 12 / scale }));
      lx = a.points[0].x * width;
      ly = a.points[0].y * height;
    }
    const r = 10 / scale;
    group.append(svg("circle", { cx: lx, cy: ly, r, class: `dot ${state}` }));
    const label = svg("text", { x: lx, y: ly, class: "label", "font-size": 11 / scale });
    label.textContent = String(m.n);
    group.append(label);
    return group;
  }

  listen(marks, side, width, height, scale) {
    const at = (event) => {
      const box = marks.getBoundingClientRect();
      return { x: (event.clientX - box.left) / box.width, y: (event.clientY - box.top) / box.height, cx: event.clientX, cy: event.clientY };
    };
    let start = null;
    let points = [];
    let preview = null;
    marks.addEventListener("pointerdown", (event) => {
      if (event.button !== 0) return;
      event.preventDefault();
      marks.setPointerCapture(event.pointerId);
      start = at(event);
      points = [start];
    });
    marks.addEventListener("pointermove", (event) => {
      if (!start) return;
      const now = at(event);
      points.push(now);
      preview?.remove();
      const anchor = this.anchorOf(start, now, points);
      if (anchor.type === "point") return;
      preview = this.shape({ id: "", n: "+", side, anchor, status: "pending" }, width, height, scale);
      marks.append(preview);
    });
    const finish = (event) => {
      if (!start) return;
      const anchor = this.anchorOf(start, at(event), points);
      start = null;
      preview?.remove();
      this.onDraw(side, anchor);
    };
    marks.addEventListener("pointerup", finish);
    marks.addEventListener("pointercancel", () => { start = null; preview?.remove(); });
  }

  anchorOf(start, end, points) {
    const moved = Math.hypot(end.cx - start.cx, end.cy - start.cy) > DRAG_PX;
    if (!moved) return { type: "point", x: round(start.x), y: round(start.y) };
    if (this.tool === "path") {
      const every = Math.ceil(points.length / MAX_POINTS);
      const kept = points.filter((_, i) => i % every === 0).map((p) => ({ x: round(p.x), y: round(p.y) }));
      if (kept.length < 2) kept.push({ x: round(end.x), y: round(end.y) });
      return { type: "path", points: kept, closed: false };
    }
    const x = round(Math.min(start.x, end.x));
    const y = round(Math.min(start.y, end.y));
    return { type: "rect", x, y, w: round(Math.min(Math.max(start.x, end.x), 1) - x), h: round(Math.min(Math.max(start.y, end.y), 1) - y) };
  }
}
