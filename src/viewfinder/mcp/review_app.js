// The review app's script, inlined into ui://viewfinder/review by review_app.py.
(() => {
  let nextId = 1;
  let review = null;
  const points = {};
  const pending = new Map();
  const root = document.getElementById("app");
  const say = (text) => { document.getElementById("status").textContent = text; };
  const send = (message) => window.parent.postMessage(message, "*");
  const request = (method, params) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    send({ jsonrpc: "2.0", id, method, params });
  });
  window.addEventListener("message", (event) => {
    const m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.id !== undefined && pending.has(m.id) && !m.method) {
      const waiting = pending.get(m.id);
      pending.delete(m.id);
      if (m.error) waiting.reject(new Error(m.error.message)); else waiting.resolve(m.result);
      return;
    }
    if (m.method === "ui/notifications/tool-result") show(m.params);
  });
  const token = () => review.review_url.split("/r/")[1];
  async function call(name, args, done) {
    try {
      const result = await request("tools/call", { name, arguments: { token: token(), ...args } });
      if (result.isError) { say(result.content[0].text); return; }
      show(result);
      say(done);
    } catch (error) { say(error.message); }
  }
  function show(result) {
    const data = result && result.structuredContent;
    if (!data) return;
    review = data.review || data;
    render();
  }
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    Object.assign(node, props || {});
    for (const child of children) node.append(child);
    return node;
  }
  function place(node, a) {
    node.style.left = `${a.x * 100}%`; node.style.top = `${a.y * 100}%`;
    if (a.w) { node.style.width = `${a.w * 100}%`; node.style.height = `${a.h * 100}%`; }
  }
  function shotView(shot) {
    const marks = review.work_packets.pins.filter(
      (p) => p.review_id === review.id && p.screenshot_index === shot.index);
    const img = el("img", { src: shot.url, alt: `Screenshot ${shot.index + 1}: ${shot.label}` });
    const frame = el("div", { className: "shot" }, img);
    for (const p of marks) {
      const spot = p.area || p.point;
      if (!spot) continue;
      const mark = el("span", { className: p.area ? "box" : "dot", title: p.number });
      place(mark, spot);
      frame.append(mark);
    }
    frame.addEventListener("click", (event) => {
      const r = img.getBoundingClientRect();
      points[shot.index] = { x: (event.clientX - r.left) / r.width, y: (event.clientY - r.top) / r.height };
      const dot = frame.querySelector(".dot.new") || el("span", { className: "dot new" });
      place(dot, points[shot.index]);
      frame.append(dot);
    });
    const severity = el("select", { name: "severity", ariaLabel: "Severity" });
    for (const s of ["must-fix", "nit", "question", "keep", "wording", "spacing", "size", "color", "alignment"]) {
      severity.append(el("option", { value: s, textContent: s, selected: s === "nit" }));
    }
    const body = el("input", { name: "body", required: true, placeholder: "What is wrong",
      ariaLabel: `Mark on screenshot ${shot.index + 1}` });
    const form = el("form", {}, severity, body, el("button", { type: "submit", textContent: "Add mark" }));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const args = { screenshot_index: shot.index, body: body.value, severity: severity.value };
      if (points[shot.index]) args.point = points[shot.index];
      delete points[shot.index];
      call("add_mark", args, "Mark added");
    });
    return el("figure", {}, el("figcaption", { textContent: `${shot.index + 1}. ${shot.label}` }), frame, form);
  }
  function markView(p) {
    const item = el("li", {}, el("strong", { textContent: p.number }), ` ${p.severity} · ${p.status} · ${p.body}`);
    if (p.note) item.append(el("div", { className: "muted", textContent: `Agent: ${p.note}` }));
    if (p.pass_diff) item.append(el("div", { className: "muted", textContent: p.pass_diff.summary }));
    if (p.status === "resolved" && open()) {
      const verify = el("button", { className: "primary", textContent: `Verify ${p.number}` });
      verify.addEventListener("click", () => call("verify_mark", { mark_id: p.id }, "Verified"));
      const reopen = el("button", { textContent: `Reopen ${p.number}` });
      reopen.addEventListener("click", () => call("verify_mark", { mark_id: p.id, verified: false }, "Reopened"));
      item.append(el("div", {}, verify, reopen));
    }
    return item;
  }
  const open = () => review.status === "pending" || review.status === "changes_requested";
  function render() {
    root.replaceChildren();
    root.append(el("h1", { textContent: review.title }));
    root.append(el("p", { className: "muted", id: "facts",
      textContent: `Pass ${review.pass} · ${review.status.replace("_", " ")} · ${review.next_action.summary}` }));
    if (open()) for (const shot of review.screenshots) root.append(shotView(shot));
    const marks = review.work_packets.pins;
    root.append(el("h2", { textContent: `Marks (${marks.length})` }));
    root.append(marks.length ? el("ol", {}, ...marks.map(markView)) : el("p", { className: "muted", textContent: "No marks yet." }));
    if (open()) {
      const note = el("textarea", { rows: 2, ariaLabel: "Note for the agent" });
      const approve = el("button", { className: "primary", type: "button", textContent: "Approve" });
      const changes = el("button", { type: "button", textContent: "Request changes" });
      approve.addEventListener("click", () => call("decide_review", { decision: "approved", note: note.value || null }, "Approved"));
      changes.addEventListener("click", () => call("decide_review", { decision: "changes_requested", note: note.value || null }, "Changes requested"));
      root.append(el("div", {}, note, el("div", {}, approve, changes)));
    }
  }
  request("ui/initialize", {
    appInfo: { name: "viewfinder-review", version: "1" },
    appCapabilities: {},
    protocolVersion: "%PROTOCOL%",
  }).then(() => send({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }));
})();
