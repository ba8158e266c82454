// The page's DOM normalised for diffing: one node per line, indented by depth, attributes
// sorted, whitespace collapsed, form values as they are now, scripts' text left out.
() => {
  const SKIP_TEXT = new Set(["SCRIPT", "NOSCRIPT", "TEMPLATE"]);
  const lines = [];
  const limit = 20000;
  const quote = (v) => JSON.stringify(String(v).replace(/\s+/g, " ").trim()).slice(1, -1);
  const walk = (node, depth) => {
    if (lines.length >= limit) return;
    const pad = "  ".repeat(depth);
    if (node.nodeType === Node.TEXT_NODE) {
      const text = node.textContent.replace(/\s+/g, " ").trim();
      if (text) lines.push(pad + '"' + quote(text) + '"');
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    if (node.hasAttribute("data-viewfinder-replay")) return;
    const tag = node.tagName.toLowerCase();
    const attrs = Array.from(node.attributes)
      .map((a) => [a.name, a.value])
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    if ((tag === "input" || tag === "textarea" || tag === "select") && node.type !== "password") {
      const i = attrs.findIndex((a) => a[0] === "value");
      if (i >= 0) attrs.splice(i, 1);
      attrs.push([node.type === "checkbox" || node.type === "radio" ? "checked" : "value",
                  node.type === "checkbox" || node.type === "radio" ? String(node.checked) : node.value]);
    }
    const shown = attrs.map(([k, v]) => (v === "" ? k : k + '="' + quote(v) + '"'));
    lines.push(pad + "<" + [tag, ...shown].join(" ") + ">");
    if (SKIP_TEXT.has(node.tagName)) return;
    const kids = node.shadowRoot ? [...node.shadowRoot.childNodes, ...node.childNodes] : node.childNodes;
    for (const child of kids) walk(child, depth + 1);
  };
  walk(document.documentElement, 0);
  return lines.join("\n");
}
