// The diff viewer: five ways to look at a change, with zoom and scroll kept in step between
// panes. Tall images arrive in pixel pages, fetched as they come near the visible area, so a
// full-page screenshot scrolls without one huge download or decode.

const MIN_SCALE = 0.05;
const MAX_SCALE = 16;
const FIT_MAX = 2; // small screenshots are enlarged to fit, but not beyond this
const CROP_PAD = 24;
const LABELS = { before: "Before (baseline)", after: "After (this build)", diff: "Diff" };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));

export class Viewer {
  constructor(root, data, decorate) {
    this.root = root;
    this.data = data;
    this.decorate = decorate; // (layer, side, width, height, scale) draws thread marks
    this.mode = data.mode;
    this.scale = null; // null: fit to the pane's width
    this.opacity = 0.5;
    this.swipe = 0.5;
    this.change = 0;
    this.scrollers = [];
    this.layers = [];
    this.observers = [];
    this.resize = new ResizeObserver(() => this.scale === null && this.applyScale());
    this.resize.observe(root);
  }

  show(mode) {
    this.mode = mode;
    this.root.dataset.mode = mode;
    this.render();
  }

  keys() {
    const p = this.data.panes;
    switch (this.mode) {
      case "side": return ["before", "after"];
      case "overlay": case "swipe": return ["before", "after"];
      case "diff": return ["diff"];
      case "changes": return [];
      default: return [p.after ? "after" : "before"].filter((k) => p[k]);
    }
  }

  render() {
    for (const o of this.observers) o.disconnect();
    this.observers = [];
    this.scrollers = [];
    this.layers = [];
    this.root.replaceChildren();
    if (this.mode === "changes") {
      this.renderChanges();
      return;
    }
    const keys = this.keys();
    if (this.mode === "overlay" || this.mode === "swipe") {
      const label = this.mode === "overlay" ? "Overlay: after over before" : "Swipe: before on the left, after on the right";
      const pane = this.pane(label, keys, "Before and after images, layered");
      this.root.append(el("div", { class: "panes" }, pane));
    } else {
      const panes = keys.map((k) => this.pane(LABELS[k], [k], `${LABELS[k]} image`));
      this.root.append(el("div", { class: panes.length > 1 ? "panes two" : "panes" }, ...panes));
    }
    this.applyScale();
  }

  pane(label, keys, name) {
    const p = this.data.panes;
    const size = keys.map((k) => p[k].width ? `${p[k].width} × ${p[k].height}` : "").filter(Boolean);
    const canvas = el("div", { class: "canvas" });
    const scroller = el("div", { class: "scroller", tabindex: "0", role: "region", "aria-label": name }, canvas);
    for (const key of keys) canvas.append(this.layer(key, scroller));
    if (this.mode === "swipe") canvas.append(el("div", { class: "swipe-line" }));
    this.follow(scroller);
    return el("div", { class: "pane", "data-pane": keys.join("-") },
      el("div", { class: "pane-label" }, el("span", {}, label), el("span", {}, size[size.length - 1] ?? "")),
      scroller);
  }

  layer(key, scroller) {
    const { src, width, height } = this.data.panes[key];
    const rows = this.data.pageRows;
    const layer = el("div", { class: "layer", "data-side": key });
    const pages = el("div", { class: "pages" });
    layer.append(pages);
    if (!height || height <= rows) {
      const img = el("img", { src, alt: "", decoding: "async", draggable: "false" });
      if (width) {
        img.width = width;
        img.height = height;
      } else {
        img.addEventListener("load", () => {
          Object.assign(this.data.panes[key], { width: img.naturalWidth, height: img.naturalHeight });
          this.applyScale();
        }, { once: true });
      }
      pages.append(img);
    } else {
      const observer = new IntersectionObserver((entries) => {
        for (const entry of entries) {
          if (!entry.isIntersecting) continue;
          entry.target.src = entry.target.dataset.src;
          observer.unobserve(entry.target);
        }
      }, { root: scroller, rootMargin: "600px 200px" });
      this.observers.push(observer);
      for (let top = 0; top < height; top += rows) {
        const h = Math.min(rows, height - top);
        const img = el("img", { alt: "", decoding: "async", draggable: "false", "data-src": `${src}?offset=${top}&height=${h}` });
        img.width = width;
        img.height = h;
        pages.append(img);
        observer.observe(img);
      }
    }
    this.layers.push(layer);
    return layer;
  }

  // Scrolling one pane scrolls the others to the same place.
  follow(scroller) {
    this.scrollers.push(scroller);
    scroller.addEventListener("scroll", () => {
      const expected = scroller.expected;
      if (expected && expected[0] === scroller.scrollLeft && expected[1] === scroller.scrollTop) return;
      scroller.expected = null;
      for (const other of this.scrollers) {
        if (other === scroller) continue;
        other.scrollLeft = scroller.scrollLeft;
        other.scrollTop = scroller.scrollTop;
        other.expected = [other.scrollLeft, other.scrollTop];
      }
    }, { passive: true });
    scroller.addEventListener("wheel", (event) => {
      if (!event.ctrlKey && !event.metaKey) return;
      event.preventDefault();
      this.zoomBy(event.deltaY < 0 ? 1.15 : 1 / 1.15, event.clientX, event.clientY, scroller);
    }, { passive: false });
  }

  extent() {
    const p = this.data.panes;
    const keys = this.keys();
    return {
      width: Math.max(1, ...keys.map((k) => p[k].width || 0)),
      height: Math.max(1, ...keys.map((k) => p[k].height || 0)),
    };
  }

  fitScale() {
    const scroller = this.scrollers[0];
    if (!scroller) return 1;
    const { width } = this.extent();
    return clamp((scroller.clientWidth - 2) / width, MIN_SCALE, FIT_MAX);
  }

  current() {
    return this.scale ?? this.fitScale();
  }

  applyScale() {
    if (this.mode === "changes") {
      this.renderChanges();
      return;
    }
    const scale = this.current();
    const { width, height } = this.extent();
    for (const scroller of this.scrollers) {
      const canvas = scroller.firstElementChild;
      canvas.style.width = `${Math.round(width * scale)}px`;
      canvas.style.height = `${Math.round(height * scale)}px`;
    }
    for (const layer of this.layers) {
      const side = layer.dataset.side;
      const pane = this.data.panes[side];
      if (!pane.width) continue;
      layer.style.width = `${pane.width * scale}px`;
      this.decorate(layer, side, pane.width, pane.height, scale, this.mode);
    }
    this.applyBlend();
    const level = document.getElementById("zoom-level");
    if (level) level.textContent = `${Math.round(scale * 100)}%`;
  }

  applyBlend() {
    const after = this.root.querySelector('.layer[data-side="after"]');
    if (!after || (this.mode !== "overlay" && this.mode !== "swipe")) return;
    after.style.opacity = this.mode === "overlay" ? String(this.opacity) : "1";
    const line = this.root.querySelector(".swipe-line");
    if (this.mode === "swipe") {
      const x = Math.round(this.extent().width * this.current() * this.swipe);
      after.style.clipPath = `inset(0 0 0 ${x}px)`;
      line.style.left = `${x - 1}px`;
    } else {
      after.style.clipPath = "";
    }
  }

  zoomBy(factor, clientX, clientY, origin) {
    const old = this.current();
    const next = clamp(old * factor, MIN_SCALE, MAX_SCALE);
    this.setScale(next, clientX, clientY, origin);
  }

  // Keep the image point under (clientX, clientY), or the pane's centre, where it is.
  setScale(next, clientX, clientY, origin) {
    const old = this.current();
    const scroller = origin ?? this.scrollers[0];
    if (!scroller) {
      this.scale = next;
      this.applyScale();
      return;
    }
    const box = scroller.getBoundingClientRect();
    const cx = (clientX ?? box.left + scroller.clientWidth / 2) - box.left;
    const cy = (clientY ?? box.top + scroller.clientHeight / 2) - box.top;
    const x = (scroller.scrollLeft + cx) / old;
    const y = (scroller.scrollTop + cy) / old;
    this.scale = next;
    this.applyScale();
    scroller.scrollLeft = x * next - cx;
    scroller.scrollTop = y * next - cy;
  }

  zoom(what) {
    if (what === "fit") {
      this.scale = null;
      this.applyScale();
    } else if (what === "actual") {
      this.setScale(1);
    } else {
      this.zoomBy(what === "in" ? 1.25 : 0.8);
    }
  }

  setOpacity(value) {
    this.opacity = value;
    this.applyBlend();
  }

  setSwipe(value) {
    this.swipe = value;
    this.applyBlend();
  }

  // Scroll every pane so that a point of an image (0..1 of its size) is in view.
  reveal(side, x, y) {
    const pane = this.data.panes[side] ?? this.data.panes.after;
    if (!pane?.width) return;
    const scale = this.current();
    for (const scroller of this.scrollers) {
      scroller.scrollTop = Math.max(0, y * pane.height * scale - scroller.clientHeight / 3);
      scroller.scrollLeft = Math.max(0, x * pane.width * scale - scroller.clientWidth / 2);
    }
  }

  step(delta) {
    const count = this.data.regions.length;
    if (!count) return;
    this.change = (this.change + delta + count) % count;
    this.renderChanges();
  }

  renderChanges() {
    const regions = this.data.regions;
    const label = document.getElementById("change-label");
    this.root.replaceChildren();
    if (!regions.length) {
      this.root.append(el("p", { class: "changes" }, "No changed regions."));
      return;
    }
    const r = regions[this.change];
    if (label) label.textContent = `Change ${this.change + 1} of ${regions.length}`;
    const wide = this.root.clientWidth > 700;
    const room = (wide ? this.root.clientWidth / 2 : this.root.clientWidth) - 40;
    const box = {
      x0: Math.max(0, r.x - CROP_PAD), y0: Math.max(0, r.y - CROP_PAD),
      x1: r.x + r.width + CROP_PAD, y1: r.y + r.height + CROP_PAD,
    };
    const scale = clamp(Math.min(room / (box.x1 - box.x0), 460 / (box.y1 - box.y0)), 0.1, 4);
    const what = `${r.width} × ${r.height} px at (${r.x}, ${r.y}), ${r.changed_pixels.toLocaleString("en")} pixels changed`;
    this.root.append(el("div", { class: "changes" },
      el("p", {}, el("strong", {}, `Change ${this.change + 1} of ${regions.length}: `), what),
      el("div", { class: "change-pair" }, this.crop("before", r, box, scale), this.crop("after", r, box, scale))));
  }

  crop(side, r, box, scale) {
    const pane = this.data.panes[side];
    const title = el("span", { class: "pane-label" }, LABELS[side]);
    if (!pane || box.y0 >= pane.height || box.x0 >= pane.width) {
      return el("div", { class: "crop-box" }, title, el("p", { class: "crop-missing" }, `This change is outside the ${side} image.`));
    }
    const rows = Math.min(box.y1, pane.height) - box.y0;
    const img = el("img", { alt: `${LABELS[side]} around change ${this.change + 1}`, src: `${pane.src}?offset=${box.y0}&height=${Math.min(rows, 4096)}` });
    img.style.left = `${-box.x0 * scale}px`;
    img.style.top = "0px";
    img.style.width = `${pane.width * scale}px`;
    const outline = el("div", { class: "outline" });
    Object.assign(outline.style, {
      left: `${(r.x - box.x0) * scale - 2}px`, top: `${(r.y - box.y0) * scale - 2}px`,
      width: `${r.width * scale + 4}px`, height: `${r.height * scale + 4}px`,
    });
    const frame = el("div", { class: "crop" }, img, outline);
    frame.style.width = `${(box.x1 - box.x0) * scale}px`;
    frame.style.height = `${(box.y1 - box.y0) * scale}px`;
    return el("div", { class: "crop-box" }, title, frame);
  }
}
