// A guest's page of a design checkup: point at an area or a spot of a screenshot (or at all of
// it) and send a suggestion through this link's REST route. Suggestions are hints: the
// reviewer decides which become marks.

import { toast } from "./api.js";
import { clearDrafts, drawable, placeAll } from "./draw.js";

const token = location.pathname.split("/")[2];
const form = document.getElementById("suggest");
const where = document.getElementById("suggest-where");
let spot = null; // {area} or {point} on the chosen screenshot; null: the whole of it

function whole() {
  spot = null;
  clearDrafts();
  if (where) where.textContent = "On the whole screenshot chosen below.";
}

placeAll();
for (const shot of document.querySelectorAll(".shot.drawable")) {
  drawable(shot, (chosen) => {
    clearDrafts();
    spot = chosen;
    const index = Number(shot.dataset.shot);
    form.elements.screenshot_index.value = String(index);
    const what = chosen.area ? "an area of" : "a point on";
    where.textContent = `On ${what} screenshot ${index + 1}.`;
    form.elements.body.focus();
  });
}
document.getElementById("suggest-whole")?.addEventListener("click", whole);
form?.elements.screenshot_index.addEventListener("change", whole);

form?.addEventListener("submit", async (event) => {
  event.preventDefault();
  const body = {
    screenshot_index: Number(form.elements.screenshot_index.value),
    body: form.elements.body.value,
    ...(spot ?? {}),
  };
  if (form.elements.name.value) body.name = form.elements.name.value;
  const response = await fetch(`/api/v1/g/${token}/suggestions`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    toast(data?.error?.message ?? `the server answered ${response.status}`, true);
    return;
  }
  toast("Suggestion sent");
  location.reload();
});
