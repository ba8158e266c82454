// A build page: accept every change at once, and follow a build that is still comparing.
import { attempt, refresh, send, toast } from "./api.js";
import { watch } from "./live.js";

document.addEventListener("click", async (event) => {
  const button = event.target.closest("[data-accept-build]");
  if (!button) return;
  button.disabled = true;
  const result = await attempt(() => send("POST", `/ui/api/builds/${button.dataset.acceptBuild}/accept`));
  if (result) {
    const blocked = result.blocked.map((s) => s.name).join(", ");
    toast(result.message + (blocked ? ` Blocked: ${blocked}.` : ""), result.blocked.length > 0);
    await refresh(["build"]);
  } else {
    button.disabled = false;
  }
});

watch();
