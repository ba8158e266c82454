// A test run's page: a person accepts, rejects or ignores a screenshot diff; the decision is
// shown from a fresh render of the page.
import { refresh, send, toast } from "./api.js";

document.addEventListener("click", async (event) => {
  const button = event.target.closest("[data-decide]");
  if (!button) return;
  const shot = button.closest(".replay-shot");
  const url = `/ui/api/replay-diffs/${encodeURIComponent(button.dataset.replayDiff)}` +
    `/screenshots/${encodeURIComponent(button.dataset.screenshot)}/decision`;
  button.disabled = true;
  try {
    const result = await send("POST", url, { decision: button.dataset.decide });
    toast(`${button.dataset.screenshot}: ${result.decision}`);
    await refresh([shot.id]);
  } catch (error) {
    toast(error.message, true);
    button.disabled = false;
  }
});
