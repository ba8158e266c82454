// Regions marked data-live="MS" refresh themselves from the server every MS milliseconds until
// the fresh render no longer marks them live (a build that finished comparing).
import { refresh } from "./api.js";

function openGroups() {
  return new Set([...document.querySelectorAll("details[id][open]")].map((d) => d.id));
}

export function watch(onChange) {
  const region = document.querySelector("[data-live]");
  if (!region) return;
  const id = region.id;
  const every = Number(region.dataset.live) || 2000;
  const tick = async () => {
    if (document.visibilityState === "visible") {
      const open = openGroups();
      const before = document.getElementById(id)?.outerHTML;
      await refresh([id]).catch(() => null);
      const now = document.getElementById(id);
      if (!now) return;
      for (const details of now.querySelectorAll("details[id]")) {
        details.open = open.has(details.id) || details.open;
      }
      if (now.outerHTML !== before && onChange) onChange();
      if (!now.hasAttribute("data-live")) return;
    }
    setTimeout(tick, every);
  };
  setTimeout(tick, every);
}
