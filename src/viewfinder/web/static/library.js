// Baselines and contexts: deleting a baseline and closing a context, each after a confirmation.
import { ask, attempt, refresh, send, toast } from "./api.js";

document.addEventListener("click", async (event) => {
  const dialog = document.getElementById("confirm");
  const del = event.target.closest("[data-delete-baseline]");
  if (del) {
    const yes = await ask(dialog, `The next build registers a new baseline for "${del.dataset.name}".`);
    if (!yes) return;
    const done = await attempt(() => send("DELETE", `/ui/api/baselines/${del.dataset.deleteBaseline}`));
    if (done) {
      toast(`Baseline of ${done.name} deleted.`);
      await refresh(["main"]);
    }
    return;
  }
  const close = event.target.closest("[data-close]");
  if (close) {
    const merged = close.dataset.close === "merged";
    const text = merged
      ? `Close ${close.dataset.key} as merged: its baselines become the shared ones.`
      : `Close ${close.dataset.key} and discard its baselines.`;
    if (!(await ask(dialog, text))) return;
    const body = { context_type: close.dataset.type, context_key: close.dataset.key, reason: close.dataset.close };
    const done = await attempt(() => send("POST", "/ui/api/contexts/close", body));
    if (done) {
      const moved = merged ? `${done.baselines_promoted} baseline(s) promoted` : `${done.baselines_discarded} baseline(s) discarded`;
      toast(`Closed ${done.context.key}: ${moved}.`);
      await refresh(["main"]);
    }
  }
});
