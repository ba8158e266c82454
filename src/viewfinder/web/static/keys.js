// Single-key shortcuts. They stay out of the way while a person types into a field or has a
// modifier held, so they never eat text or the browser's own shortcuts.

const TYPING = "textarea, select, [contenteditable], input:not([type=radio]):not([type=checkbox]):not([type=range])";

export function bindKeys(map) {
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.closest?.(TYPING)) return;
    if (document.querySelector("dialog[open]") && event.key !== "?") return;
    const action = map[event.key];
    if (!action) return;
    event.preventDefault();
    action(event);
  });
}
