// Read a laid-out page in one pass: a DOM snapshot (elements in document order, their
// attributes and own text) and the boxes the second opinion needs (text runs, controls and
// images, with their styles). Runs inside the captured page; returns plain JSON.
//
// Sizes are as shown: a phone lays out a page without a viewport meta tag 980 px wide and
// shrinks it to fit, so layout px are multiplied by that zoom (text set at 16 px that shows at
// 6 px is 6 px to the reader, and the box must land where the screenshot shows it).
(options) => {
  const maxNodes = options.maxNodes;
  const maxBoxes = options.maxBoxes;
  const sx = window.scrollX;
  const sy = window.scrollY;
  const zoom = window.visualViewport ? window.visualViewport.scale : 1;
  const shown = (r) => [(r[0]) * zoom, (r[1]) * zoom, r[2] * zoom, r[3] * zoom];
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "TITLE"]);
  const IMAGES = new Set(["IMG", "SVG", "CANVAS", "VIDEO", "PICTURE", "OBJECT", "EMBED"]);
  const ACTIONABLE_ROLES = new Set([
    "button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "menuitemcheckbox",
    "menuitemradio", "option", "slider", "spinbutton", "textbox", "combobox", "searchbox",
  ]);
  const INPUT_ROLES = {
    checkbox: "checkbox", radio: "radio", range: "slider", number: "spinbutton",
    button: "button", submit: "button", reset: "button", image: "button", search: "searchbox",
  };
  const ROLES = {
    BUTTON: "button", NAV: "navigation", MAIN: "main", HEADER: "banner", FOOTER: "contentinfo",
    ASIDE: "complementary", H1: "heading", H2: "heading", H3: "heading", H4: "heading",
    H5: "heading", H6: "heading", IMG: "img", SELECT: "combobox", TEXTAREA: "textbox",
    UL: "list", OL: "list", LI: "listitem", TABLE: "table", FORM: "form", DIALOG: "dialog",
    SUMMARY: "button",
  };
  const clean = (text, limit) => (text || "").replace(/\s+/g, " ").trim().slice(0, limit);

  const roleOf = (el) => {
    const explicit = (el.getAttribute("role") || "").trim().split(/\s+/)[0];
    if (explicit) return explicit;
    if (el.tagName === "A") return el.hasAttribute("href") ? "link" : "";
    if (el.tagName === "INPUT") return INPUT_ROLES[el.type] || (el.type === "hidden" ? "" : "textbox");
    return ROLES[el.tagName] || "";
  };
  const actionable = (el, role) => {
    if (el.tagName === "A") return el.hasAttribute("href");
    if (el.tagName === "INPUT") return el.type !== "hidden" && !el.disabled;
    if (["BUTTON", "SELECT", "TEXTAREA"].includes(el.tagName)) return !el.disabled;
    if (el.tagName === "SUMMARY") return true;
    if (ACTIONABLE_ROLES.has(role)) return true;
    if (el.hasAttribute("onclick") || el.isContentEditable) return true;
    const tab = el.getAttribute("tabindex");
    return tab !== null && Number(tab) >= 0;
  };
  const nameOf = (el) => {
    const label = el.getAttribute("aria-label");
    if (label && label.trim()) return clean(label, 200);
    const by = el.getAttribute("aria-labelledby");
    if (by) {
      const text = by.split(/\s+/).map((id) => document.getElementById(id)?.textContent || "").join(" ");
      if (text.trim()) return clean(text, 200);
    }
    if (el.labels && el.labels.length) return clean(el.labels[0].textContent, 200);
    for (const attribute of ["alt", "title", "placeholder"]) {
      const value = el.getAttribute(attribute);
      if (value && value.trim()) return clean(value, 200);
    }
    if (el.tagName === "INPUT" && ["button", "submit", "reset"].includes(el.type)) return clean(el.value, 200);
    return clean(el.textContent, 200);
  };

  // The background a text is drawn on, by CSS: the first ancestor that paints one. Only a
  // hint for people reading the boxes; contrast is measured from the pixels.
  const backgrounds = new Map();
  const backgroundOf = (el) => {
    if (!el || el.nodeType !== 1) return "rgb(255, 255, 255)";
    if (backgrounds.has(el)) return backgrounds.get(el);
    const colour = getComputedStyle(el).backgroundColor;
    const painted = colour && colour !== "transparent" && !/rgba\(.*,\s*0\)$/.test(colour);
    const found = painted ? colour : backgroundOf(el.parentElement);
    backgrounds.set(el, found);
    return found;
  };

  const ownTextRect = (el) => {
    let text = "";
    let left = Infinity, top = Infinity, right = -Infinity, bottom = -Infinity;
    const range = document.createRange();
    for (const child of el.childNodes) {
      if (child.nodeType !== 3 || !child.data.trim()) continue;
      text += child.data;
      range.selectNodeContents(child);
      for (const r of range.getClientRects()) {
        if (r.width <= 0 || r.height <= 0) continue;
        left = Math.min(left, r.left); top = Math.min(top, r.top);
        right = Math.max(right, r.right); bottom = Math.max(bottom, r.bottom);
      }
    }
    if (right <= left) return null;
    return { text: clean(text, 200), rect: [left + sx, top + sy, right - left, bottom - top] };
  };

  const boxes = [];
  let count = 0;
  let truncated = false;
  const visit = (el) => {
    if (count >= maxNodes) { truncated = true; return null; }
    const node = { i: count++, tag: el.tagName.toLowerCase() };
    const attrs = {};
    for (const a of el.attributes) {
      if (a.name === "style" || a.name.startsWith("on")) continue;
      let value = a.value;
      if (a.name === "value" && el.type === "password") value = "***";
      if (value.startsWith("data:")) value = value.slice(0, 40) + "...";
      attrs[a.name] = value.slice(0, 300);
    }
    if (Object.keys(attrs).length) node.attrs = attrs;
    if (SKIP.has(el.tagName)) return node;
    const own = ownTextRect(el);
    if (own) node.text = own.text;
    const rect = el.getBoundingClientRect();
    const visible = rect.width > 0 && rect.height > 0 && el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
    if (visible) {
      const role = roleOf(el);
      const acts = actionable(el, role);
      const image = IMAGES.has(el.tagName) || (el.tagName === "INPUT" && el.type === "image");
      if ((own || acts || image) && boxes.length < maxBoxes) {
        const style = getComputedStyle(el);
        const where = shown(own && !acts ? own.rect : [rect.left + sx, rect.top + sy, rect.width, rect.height]);
        const parentText = el.parentElement ? Array.from(el.parentElement.childNodes).some((n) => n.nodeType === 3 && n.data.trim()) : false;
        boxes.push({
          node: node.i, tag: node.tag, role, name: acts || image ? nameOf(el) : "", text: own ? own.text : "",
          x: where[0], y: where[1], w: where[2], h: where[3],
          font_size: (parseFloat(style.fontSize) || 0) * zoom, font_weight: parseInt(style.fontWeight, 10) || 400,
          color: style.color, background: backgroundOf(el), actionable: acts,
          inline: acts && style.display === "inline" && parentText, image,
          disabled: el.closest("[aria-disabled=true], :disabled") !== null,
        });
      }
    }
    const children = [];
    for (const child of el.children) {
      const visited = visit(child);
      if (visited) children.push(visited);
    }
    if (el.shadowRoot) for (const child of el.shadowRoot.children) {
      const visited = visit(child);
      if (visited) children.push(visited);
    }
    if (children.length) node.children = children;
    return node;
  };
  const root = visit(document.documentElement);
  const scroller = document.scrollingElement || document.documentElement;
  return {
    dom: {
      url: location.href, title: document.title, lang: document.documentElement.lang || "",
      nodes: count, truncated, root,
    },
    boxes,
    page: { width: scroller.scrollWidth * zoom, height: scroller.scrollHeight * zoom, zoom },
  };
}
