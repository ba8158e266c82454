// A test run's page: a person accepts, rejects or ignores a screenshot diff, and replies on its
// comment threads; what changed is shown from a fresh render of the page.
import { attempt, refresh, send, toast } from "./api.js";

document.addEventListener("submit", async (event) => {
  const form = event.target.closest("form[data-reply]");
  if (!form) return;
  event.preventDefault();
  const shot = form.closest(".replay-shot");
  const body = form.querySelector("textarea").value;
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  const made = await attempt(() => send("POST", `/ui/api/comments/${encodeURIComponent(form.dataset.reply)}/replies`, { body }));
  if (made) {
    toast("Reply posted.");
    await refresh([shot.id]);
  } else {
    button.disabled = false;
  }
});

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
