"""A checkup's screenshots: captured by the engine (in a job for pages, emails and PDFs),
stored as images with the boxes of their page, measured by the second opinion, and compared
with the matching screenshot of the pass before, so each resolved mark can say whether its
area changed."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from viewfinder import capture
from viewfinder.capture import Area, Box, Finding, Policy, Shot, Violation, ViolationNode
from viewfinder.capture.placeholder import placeholder
from viewfinder.errors import InvalidInput, ViewfinderError
from viewfinder.ids import new_id
from viewfinder.jobs import registry
from viewfinder.services import comparisons, credits, images, storage, threads, vision
from viewfinder.services.env import Actor, Env
from viewfinder.store.models import (
    Checkup,
    CheckupPin,
    CheckupShot,
    Image,
    Thread,
    utcnow,
)

log = logging.getLogger("viewfinder.checkups")
CAPTURE_JOB = "checkup_capture"
OWNER = "checkup"
MAX_SHOTS = 12  # screenshots a pass may hold, its first ones and those added later
comparisons.register_owner(OWNER, lambda _s, _row: None)

# What a failed capture's placeholders are called, by source.
_PLACEHOLDERS = {"capture": ("desktop", "mobile"), "html": ("light",), "pdf": ("page-1",)}


def policy(env: Env) -> Policy:
    return Policy.from_settings(env.settings)


def system_actor(checkup: Checkup) -> Actor:
    """Who writes what the server itself finds (second-opinion hints)."""
    return Actor(
        project_id=checkup.project_id,
        key_id=checkup.created_by,
        name="second opinion",
        roles=frozenset({"review"}),
        is_agent=True,
    )


def next_number(s: Session, checkup_id: str, kind: str, source: str | None = None) -> int:
    query = select(func.coalesce(func.max(CheckupPin.number), 0)).where(
        CheckupPin.checkup_id == checkup_id, CheckupPin.kind == kind
    )
    if kind == "finding":
        guest = CheckupPin.source == "guest"
        query = query.where(guest if source == "guest" else ~guest)
    return int(s.scalar(query) or 0) + 1


def area_anchor(area: Any) -> dict[str, Any] | None:
    if area is None:
        return None
    return {"type": "rect", "x": area.x, "y": area.y, "w": area.w, "h": area.h}


def add_hints(
    s: Session,
    actor: Actor,
    checkup: Checkup,
    findings: Sequence[tuple[int, Finding]],
    *,
    source: str | None = None,
    related: dict[int, str | None] | None = None,
) -> list[CheckupPin]:
    """Findings as hint threads on their screenshots (S1, S2 ...), in the caller's
    transaction; one already there (same rule, screenshot and area) is not added again."""
    shots = shot_rows(s, checkup.id)
    existing = {
        (p.screenshot_index, p.rule, json.dumps(t.anchor, sort_keys=True), t.body)
        for p, t in s.execute(
            select(CheckupPin, Thread)
            .join(Thread, Thread.id == CheckupPin.thread_id)
            .where(CheckupPin.checkup_id == checkup.id, CheckupPin.kind == "finding")
        ).all()
    }
    added = []
    number = next_number(s, checkup.id, "finding")
    for position, (index, finding) in enumerate(findings):
        anchor = area_anchor(finding.area)
        key = (index, finding.rule, json.dumps(anchor, sort_keys=True), finding.body[:4000])
        if key in existing or index >= len(shots):
            continue
        existing.add(key)
        thread = threads.open_thread(
            s,
            actor,
            threads.On("image", shots[index].image_id),
            finding.body[:4000],
            anchor=anchor,
            kind="finding",
            severity=finding.severity,
        )
        pin = CheckupPin(
            thread_id=thread.id,
            project_id=checkup.project_id,
            checkup_id=checkup.id,
            kind="finding",
            number=number,
            screenshot_index=index,
            source=source or finding.extra.get("source") or finding.source,
            rule=None if source else finding.rule[:80],
            related_pin=(related or {}).get(position),
            reopened=0,
        )
        s.add(pin)
        added.append(pin)
        number += 1
    return added


def vision_hints(env: Env, shots: Sequence[Shot], review_type: str) -> list[Finding]:
    """The optional vision model's hints on each shot (none when no model is set)."""
    found = []
    for shot in shots:
        if shot.failed:
            continue
        for item in vision.design_findings(
            env.settings, shot.png, review_type=review_type, label=shot.label
        ):
            area = item["area"]
            found.append(
                Finding(
                    item["severity"],
                    item["body"],
                    Area(area["x"], area["y"], area["w"], area["h"]) if area else None,
                    shot.label,
                    "vision",
                    extra={"source": "vision"},
                )
            )
    return found


def shot_rows(s: Session, checkup_id: str) -> list[CheckupShot]:
    return list(
        s.scalars(
            select(CheckupShot)
            .where(CheckupShot.checkup_id == checkup_id)
            .order_by(CheckupShot.position)
        )
    )


def _boxes_file(shot: Shot) -> storage.Bytes | None:
    if not (shot.boxes or shot.violations):
        return None
    data = shot.boxes_json()
    return storage.Bytes(data, hashlib.sha256(data).hexdigest(), "application/json")


def _dom_file(shot: Shot) -> storage.Bytes | None:
    if not shot.dom:
        return None
    return storage.Bytes(shot.dom, hashlib.sha256(shot.dom).hexdigest(), "application/json")


def _compare_with_parent(
    s: Session, actor: Actor, checkup: Checkup, row: CheckupShot, image: Image
) -> None:
    """Queue the comparison of a new screenshot with the parent pass's one of the same label
    (or, for given images, the same position)."""
    if checkup.parent_id is None or row.origin == "capture_failed":
        return
    parents = shot_rows(s, checkup.parent_id)
    match = next((p for p in parents if p.label == row.label), None)
    if match is None or match.origin == "capture_failed":
        return
    base = s.get(Image, match.image_id)
    if base is None:
        return
    comparison = comparisons.new_row(actor, image, owner_kind=OWNER, owner_id=row.id)
    comparisons.request(s, comparison, image, base.id, base.sha256)
    row.comparison_id = comparison.id


def store_shots(env: Env, actor: Actor, checkup_id: str, shots: Sequence[Shot]) -> int:
    """Keep the shots as the checkup's next screenshots, with their boxes, their second
    opinion and their comparison with the pass before. Returns how many were stored. Raises
    InvalidImage, QuotaExceeded, Conflict (too many screenshots)."""
    with env.db.read() as s:
        checkup = s.get(Checkup, checkup_id)
        assert checkup is not None
        review_type = checkup.type
    found = capture.second_opinion(shots, review_type) if shots else []  # type: ignore[arg-type]
    found += vision_hints(env, shots, review_type)
    labels = {shot.label: i for i, shot in enumerate(shots)}
    files = [images.check_png(env, shot.png, what=f"screenshot {shot.label}") for shot in shots]
    boxes = [_boxes_file(shot) for shot in shots]
    doms = [_dom_file(shot) for shot in shots]
    kept = [f for f in (*boxes, *doms) if f is not None]
    claimed = storage.claim(env, actor.project_id, [*files, *kept])
    try:
        with env.db.write() as s:
            checkup = s.get(Checkup, checkup_id, with_for_update=True)
            assert checkup is not None
            start = len(shot_rows(s, checkup_id))
            if start + len(shots) > MAX_SHOTS:
                raise InvalidInput(
                    f"a pass holds at most {MAX_SHOTS} screenshots; this one has {start}: open "
                    "the next pass instead"
                )
            rows = images.insert_images(
                s,
                actor,
                [
                    (
                        file,
                        images.NewImage(
                            name=checkup.title[:200], variant=shot.label[:100], source="checkup"
                        ),
                    )
                    for file, shot in zip(files, shots, strict=True)
                ],
            )
            for offset, (shot, image, box, dom) in enumerate(
                zip(shots, rows, boxes, doms, strict=True)
            ):
                row = CheckupShot(
                    id=new_id("shp"),
                    project_id=checkup.project_id,
                    checkup_id=checkup_id,
                    position=start + offset,
                    image_id=image.id,
                    label=shot.label[:40],
                    origin=shot.origin,
                    meta=shot.meta(),
                    boxes_sha256=box.sha256 if box else None,
                    dom_sha256=dom.sha256 if dom else None,
                )
                s.add(row)
                s.flush()
                _compare_with_parent(s, actor, checkup, row, image)
            add_hints(
                s,
                system_actor(checkup),
                checkup,
                [(start + labels[f.label], f) for f in found if f.label in labels],
            )
            checkup.updated_at = utcnow()
    except BaseException:
        storage.forget(env, claimed)
        raise
    return len(shots)


def stored_shot(env: Env, row: CheckupShot, image: Image) -> Shot:
    """A stored screenshot as the engine's Shot again (its pixels, boxes and violations), for
    the second opinion to run once more."""
    png = env.blobs.get(image.sha256)
    meta: dict[str, Any] = {}
    if row.boxes_sha256:
        meta = json.loads(env.blobs.get(row.boxes_sha256))
    viewport = meta.get("viewport")
    return Shot(
        png=png,
        width=image.width or 0,
        height=image.height or 0,
        label=row.label,
        origin=row.origin,  # type: ignore[arg-type]
        scale=float(meta.get("scale", 1.0)),
        viewport=(int(viewport[0]), int(viewport[1])) if viewport else None,
        mobile=bool(meta.get("mobile", False)),
        color_scheme=meta.get("color_scheme"),
        url=meta.get("url"),
        boxes=tuple(Box(**b) for b in meta.get("boxes", [])),
        violations=tuple(
            Violation(
                rule=v["rule"],
                impact=v["impact"],
                help=v["help"],
                url=v["url"],
                nodes=tuple(
                    ViolationNode(
                        target=n["target"],
                        html=n["html"],
                        rect=tuple(n["rect"]) if n.get("rect") else None,
                        selector=n.get("selector"),
                    )
                    for n in v["nodes"]
                ),
            )
            for v in meta.get("violations", [])
        ),
        reason=meta.get("reason"),
    )


def rerun_second_opinion(env: Env, checkup_id: str, index: int | None) -> int:
    """Measure the screenshots again (one, or all) and add the hints not there yet. Returns
    how many were added."""
    with env.db.read() as s:
        checkup = s.get(Checkup, checkup_id)
        assert checkup is not None
        rows = shot_rows(s, checkup_id)
        chosen = [(i, r) for i, r in enumerate(rows) if index is None or i == index]
        pictures = {
            i.id: i
            for i in s.scalars(select(Image).where(Image.id.in_([r.image_id for _, r in chosen])))
        }
        review_type = checkup.type
    shots = [stored_shot(env, r, pictures[r.image_id]) for _, r in chosen]
    found = capture.second_opinion(shots, review_type) if shots else []  # type: ignore[arg-type]
    found += vision_hints(env, shots, review_type)
    by_label = {shot.label: i for (i, _), shot in zip(chosen, shots, strict=True)}
    with env.db.write() as s:
        checkup = s.get(Checkup, checkup_id, with_for_update=True)
        assert checkup is not None
        added = add_hints(
            s,
            system_actor(checkup),
            checkup,
            [(by_label[f.label], f) for f in found if f.label in by_label],
        )
        if added:
            checkup.updated_at = utcnow()
        return len(added)


# ---- the capture job --------------------------------------------------------------------------


def _capture(env: Env, request: dict[str, Any]) -> list[Shot]:
    kind, value = request["kind"], request["value"]
    rules = policy(env)
    if kind == "capture":
        return capture.capture_url(value, policy=rules, full_page=bool(request.get("full_page")))
    if kind == "html":
        return capture.capture_html(value, policy=rules)
    return capture.render_pdf(value, policy=rules)


def _placeholders(kind: str, reason: str, url: str | None) -> list[Shot]:
    return [placeholder(label, reason, url=url) for label in _PLACEHOLDERS.get(kind, ("shot",))]


def _finish_capture(env: Env, checkup_id: str, shots: Sequence[Shot]) -> None:
    failed = [shot for shot in shots if shot.failed]
    with env.db.write() as s:
        checkup = s.get(Checkup, checkup_id, with_for_update=True)
        if checkup is None:
            return
        checkup.capture_state = "failed" if failed and len(failed) == len(shots) else "done"
        checkup.capture_reason = failed[0].reason if failed else None
        if checkup.capture_state == "failed":
            credits.refund(s, checkup)  # nothing came through: the review costs nothing
        checkup.capture_request = None
        checkup.updated_at = utcnow()


def run_capture(env: Env, checkup_id: str, job_id: int | None = None) -> bool:
    """The capture job: take the screenshots the checkup asked for and keep them. A capture
    that fails keeps placeholder shots that say why (``meta.origin: capture_failed``)."""
    with env.db.read() as s:
        checkup = s.get(Checkup, checkup_id)
        if checkup is None or checkup.capture_state != "queued" or not checkup.capture_request:
            return False
        request = dict(checkup.capture_request)
        actor = system_actor(checkup)
    try:
        shots = _capture(env, request)
    except ViewfinderError as exc:
        # Input the engine refused after it was accepted (not a PDF, an address that resolved
        # to a private one): the review still opens, with a placeholder that says why.
        url = request["value"] if request["kind"] == "capture" else None
        shots = _placeholders(request["kind"], exc.message, url)
    store_shots(env, actor, checkup_id, shots)
    _finish_capture(env, checkup_id, shots)
    return False


def give_up_capture(env: Env, checkup_id: str, reason: str) -> None:
    with env.db.read() as s:
        checkup = s.get(Checkup, checkup_id)
        if checkup is None or checkup.capture_state != "queued":
            return
        request = dict(checkup.capture_request or {"kind": checkup.source, "value": ""})
        actor = system_actor(checkup)
    shots = _placeholders(request["kind"], f"the capture could not finish ({reason})", None)
    try:
        store_shots(env, actor, checkup_id, shots)
    except ViewfinderError:
        log.exception("could not keep the placeholder of checkup %s", checkup_id)
    _finish_capture(env, checkup_id, shots)


registry.register(registry.Kind(CAPTURE_JOB, run_capture, give_up_capture, time_limit=240.0))
