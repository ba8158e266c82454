// Marking a screenshot, shared by the person's review page and the guest page: drag for an
// area, click for a point (a press that moves less than CLICK_PX is a click), or from the
// keyboard focus the screenshot, move the cross with the arrow keys (Shift: further) and press
// Enter for a point there. Places are fractions 0-1 of the screenshot, as the server keeps them.

const CLICK_PX = 5;
const MIN_SIDE = 0.01; // the server drops areas under this; such a drag is a point at its centre

// Pins and drafts are placed from their data (the page's policy allows no inline styles).
export function place(box, spot) {
  const { x, y, w, h } = spot ?? box.dataset;
  const point = !Number(w) || !Number(h);
  box.classList.toggle("point", point);
  box.style.left = `${x * 100}%`;
  box.style.top = `${y * 100}%`;
  box.style.width = point ? "" : `${w * 100}%`;
  box.style.height = point ? "" : `${h * 100}%`;
}

export function placeAll(root = document) {
  for (const box of root.querySelectorAll(".pin-box")) place(box);
}

export function clearDrafts(root = document) {
  for (const shot of root.querySelectorAll(".shot.drawable")) delete shot.dataset.pending;
  for (const draft of root.querySelectorAll(".draft")) draft.hidden = true;
}

const clamp = (v) => Math.min(Math.max(v, 0), 1);

// onMark({area} | {point}) is called once a mark's place is chosen.
export function drawable(shot, onMark) {
  const outline = shot.querySelector(".draft");
  const show = (spot) => {
    outline.hidden = false;
    place(outline, { w: 0, h: 0, ...spot });
  };
  const chosen = (spot) => {
    onMark(spot); // first: it may clear the drafts of other screenshots
    shot.dataset.pending = "1";
    show(spot.area ?? spot.point);
  };
  const at = (event) => {
    const r = shot.getBoundingClientRect();
    return { x: clamp((event.clientX - r.left) / r.width), y: clamp((event.clientY - r.top) / r.height) };
  };
  const area = (a, b) => ({
    x: Math.min(a.x, b.x), y: Math.min(a.y, b.y), w: Math.abs(a.x - b.x), h: Math.abs(a.y - b.y),
  });
  const moved = (event) =>
    Math.max(Math.abs(event.clientX - start.px), Math.abs(event.clientY - start.py)) >= CLICK_PX;

  let start = null;
  shot.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) return;
    event.preventDefault(); // no text selection or native image drag; focus stays where it was
    start = { ...at(event), px: event.clientX, py: event.clientY };
    shot.setPointerCapture(event.pointerId);
  });
  shot.addEventListener("pointermove", (event) => {
    if (start && moved(event)) show(area(start, at(event)));
  });
  shot.addEventListener("pointerup", (event) => {
    if (!start) return;
    const box = area(start, at(event));
    const click = !moved(event);
    const { x, y } = start;
    start = null;
    if (click) chosen({ point: { x, y } });
    else if (box.w < MIN_SIDE || box.h < MIN_SIDE) {
      chosen({ point: { x: box.x + box.w / 2, y: box.y + box.h / 2 } });
    } else chosen({ area: box });
  });
  shot.addEventListener("pointercancel", () => {
    start = null;
  });

  // The keyboard's cross starts in the middle and stays where it was left.
  const cross = { x: 0.5, y: 0.5 };
  shot.addEventListener("focus", () => show(cross));
  shot.addEventListener("blur", () => {
    if (!shot.dataset.pending) outline.hidden = true;
  });
  shot.addEventListener("keydown", (event) => {
    const step = event.shiftKey ? 0.1 : 0.02;
    const move = {
      ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step],
    }[event.key];
    if (move) {
      event.preventDefault();
      cross.x = clamp(cross.x + move[0]);
      cross.y = clamp(cross.y + move[1]);
      show(cross);
    } else if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      chosen({ point: { ...cross } });
    }
  });
}
