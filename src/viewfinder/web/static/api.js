// Talking to the server: JSON actions carry the session's CSRF token, and parts of a page are
// refreshed from a fresh server render of the same URL (so there is one template, not two).

const csrf = () => document.querySelector('meta[name="csrf-token"]')?.content ?? "";

export async function send(method, url, body) {
  const response = await fetch(url, {
    method,
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 401) {
    location.assign(`/login?next=${encodeURIComponent(location.pathname + location.search)}`);
    throw new Error("signed out");
  }
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    throw new Error(data?.error?.message ?? `the server answered ${response.status}`);
  }
  return data;
}

export async function refresh(ids) {
  const response = await fetch(location.href, { credentials: "same-origin" });
  if (response.redirected && new URL(response.url).pathname === "/login") {
    location.assign(response.url);
    return null;
  }
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  for (const id of ids) {
    const next = fresh.getElementById(id);
    const now = document.getElementById(id);
    if (next && now) now.replaceWith(document.adoptNode(next));
  }
  return fresh;
}

let timer = 0;
export function toast(message, bad = false) {
  const box = document.getElementById("toast");
  if (!box) return;
  box.textContent = message;
  box.classList.toggle("bad", bad);
  box.classList.add("show");
  clearTimeout(timer);
  timer = setTimeout(() => box.classList.remove("show"), bad ? 8000 : 4000);
}

export async function attempt(action) {
  try {
    return await action();
  } catch (error) {
    toast(error.message, true);
    return null;
  }
}

// A yes/no question in a <dialog>; resolves true when confirmed.
export function ask(dialog, text) {
  dialog.querySelector("#confirm-text").textContent = text;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
  });
}
