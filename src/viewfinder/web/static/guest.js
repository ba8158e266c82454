// A guest's page of a design checkup: send a suggestion through this link's REST route.

import { toast } from "./api.js";

const token = location.pathname.split("/")[2];
const form = document.getElementById("suggest");

form?.addEventListener("submit", async (event) => {
  event.preventDefault();
  const body = {
    screenshot_index: Number(form.elements.screenshot_index.value),
    body: form.elements.body.value,
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
