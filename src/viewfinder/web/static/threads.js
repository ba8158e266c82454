// The thread panel: start a thread from a drawn anchor, reply, resolve or reopen, edit and
// delete your own comments. Every change is made by the server; the panel is then re-rendered
// from the server's page so what a person sees is what is stored.
import { ask, attempt, send, toast } from "./api.js";

const SHAPES = { point: "a point", rect: "a rectangle", path: "a freehand path" };

export function bindThreads({ diffId, reload, marks, viewer, select }) {
  const form = () => document.getElementById("new-thread");

  function open(side, anchor) {
    const f = form();
    if (!f) return;
    marks.pending = { side, anchor };
    f.hidden = false;
    f.querySelector(`input[name=side][value=${side}]`).checked = true;
    document.getElementById("new-thread-shape").textContent = `New thread on ${SHAPES[anchor.type]} of the ${side} image.`;
    viewer.applyScale();
    f.querySelector("textarea").focus();
  }

  function close() {
    const f = form();
    marks.pending = null;
    if (f) {
      f.hidden = true;
      f.reset();
    }
    viewer.applyScale();
  }

  document.addEventListener("submit", async (event) => {
    const target = event.target;
    if (target.id === "new-thread") {
      event.preventDefault();
      const body = target.querySelector("textarea").value;
      const side = target.querySelector("input[name=side]:checked").value;
      const anchor = marks.pending?.anchor ?? null;
      const made = await attempt(() => send("POST", `/ui/api/diffs/${diffId}/comments`, { body, side, anchor }));
      if (made) {
        close();
        await reload(made.id);
        toast("Thread started.");
      }
    } else if (target.matches("form[data-reply]")) {
      event.preventDefault();
      const body = target.querySelector("textarea").value;
      const made = await attempt(() => send("POST", `/ui/api/comments/${target.dataset.reply}/replies`, { body }));
      if (made) await reload(target.dataset.reply);
    } else if (target.matches("form.edit")) {
      event.preventDefault();
      const body = target.querySelector("textarea").value;
      const done = await attempt(() => send("PATCH", `/ui/api/comments/${target.dataset.editing}`, { body }));
      if (done) await reload();
    }
  });

  document.addEventListener("click", async (event) => {
    const t = event.target;
    if (t.closest("#new-thread [data-cancel]")) {
      close();
      return;
    }
    const resolve = t.closest("[data-resolve]");
    if (resolve) {
      const resolved = resolve.dataset.resolved === "true";
      const done = await attempt(() => send("POST", `/ui/api/comments/${resolve.dataset.resolve}/resolve`, { resolved }));
      if (done) {
        await reload(resolve.dataset.resolve);
        toast(resolved ? "Thread resolved." : "Thread reopened.");
      }
      return;
    }
    const edit = t.closest("button[data-edit]");
    if (edit) {
      const comment = document.getElementById(`comment-${edit.dataset.edit}`);
      const text = comment.querySelector(".body");
      const editor = document.createElement("form");
      editor.className = "edit";
      editor.dataset.editing = edit.dataset.edit;
      const label = document.createElement("label");
      label.htmlFor = `edit-${edit.dataset.edit}`;
      label.textContent = "Edit comment";
      const area = document.createElement("textarea");
      area.id = label.htmlFor;
      area.rows = 3;
      area.maxLength = 4000;
      area.value = text.textContent;
      const save = document.createElement("button");
      save.type = "submit";
      save.className = "primary";
      save.textContent = "Save";
      const row = document.createElement("div");
      row.className = "row";
      row.append(save);
      editor.append(label, area, row);
      text.replaceWith(editor);
      area.focus();
      return;
    }
    const del = t.closest("[data-delete]");
    if (del) {
      const yes = await ask(document.getElementById("confirm"), "Delete this comment? Deleting a thread's first comment deletes its replies.");
      if (!yes) return;
      const done = await attempt(() => send("DELETE", `/ui/api/comments/${del.dataset.delete}`));
      if (done) await reload(null);
      return;
    }
    const thread = t.closest(".thread[data-thread]");
    if (thread && !t.closest("a, button, textarea, input, label, form")) select(thread.dataset.thread, true);
  });

  return { open, close };
}
