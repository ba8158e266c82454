"""Images of a diff for people and agents: the diff image, either side, before/after crops per
changed region, and horizontal pixel pages of tall images."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from viewfinder.errors import InvalidInput, NotFound
from viewfinder.imaging import Region, crop_regions, png, read_header
from viewfinder.imaging.crops import GUTTER
from viewfinder.imaging.png import decode_rows
from viewfinder.services import comparisons, diffs, scoping, selectors
from viewfinder.services.env import Actor, Env
from viewfinder.store.models import Image, Story

KINDS = ("diff", "before", "after", "before_after")
PAGE_HEIGHT = 500
MAX_CROPS = 10
CROP_PADDING = 32
# A changed icon or digit is shown with enough around it to tell where it is.
CROP_LEAST = (320, 160)


@dataclass(frozen=True)
class Rendered:
    label: str
    png: bytes
    width: int
    height: int
    note: str = ""


def _page(data: bytes, offset: int | None, height: int | None, label: str) -> Rendered:
    """The whole image, or a band ``height`` px tall from ``offset`` when either is given.
    Neither decodes the whole image: the whole one needs only its header, a band only the rows
    down to its bottom (a 10000x10000 screenshot stays out of memory)."""
    header = read_header(data)
    if offset is None and height is None:
        return Rendered(label, data, header.width, header.height)
    top = offset or 0
    size = height or PAGE_HEIGHT
    if top < 0 or size < 1:
        raise InvalidInput("pxPagination needs offset >= 0 and height >= 1")
    if top >= header.height:
        raise InvalidInput(
            f"offset {top} is past the image's bottom (it is {header.height} px tall)"
        )
    band = decode_rows(data, top, size)
    note = f"rows {top}-{top + band.shape[0] - 1} of {header.height}"
    if top + size < header.height:
        note += f"; next page at offset {top + size}"
    return Rendered(label, png.encode(band, level=3), header.width, band.shape[0], note)


def render_diff(
    env: Env,
    actor: Actor,
    diff_id: str,
    kind: str = "diff",
    *,
    offset: int | None = None,
    height: int | None = None,
) -> list[Rendered]:
    """Images of a diff. ``before_after`` gives one side-by-side crop per changed region (up to
    10 at a time, the band ``offset``/``height`` choosing which); the other kinds give one
    image, paged by ``offset``/``height`` when asked.
    Raises InvalidInput (no such image yet), NotFound."""
    if kind not in KINDS:
        raise InvalidInput(f"which must be one of {', '.join(KINDS)} (got {kind!r})")
    with env.db.read() as s:
        row = diffs.get_row(s, actor, diff_id)
        shas = dict(
            s.execute(
                select(Image.id, Image.sha256).where(
                    Image.id.in_([row.image_id, row.base_image_id or ""])
                )
            ).all()
        )
        after_sha = shas[row.image_id]
        before_sha = shas.get(row.base_image_id or "")
        diff_sha, regions = row.diff_sha256, list(row.regions)
        result = comparisons.outcome(row)
    if kind == "after":
        return [_page(env.blobs.get(after_sha), offset, height, "after")]
    if kind == "before":
        if before_sha is None:
            raise InvalidInput(f"diff {diff_id} has no baseline image: it registered the first one")
        return [_page(env.blobs.get(before_sha), offset, height, "before")]
    if kind == "diff":
        if diff_sha is None:
            raise InvalidInput(
                f"diff {diff_id} has no diff image ({result or 'still computing'}): only changed "
                "diffs have one; ask for before or after"
            )
        return [_page(env.blobs.get(diff_sha), offset, height, "diff")]
    if before_sha is None or not regions:
        raise InvalidInput(
            f"diff {diff_id} has no changed regions to crop ({result or 'still computing'})"
        )
    return _before_after(
        env.blobs.get(before_sha), env.blobs.get(after_sha), regions, offset, height
    )


def _before_after(
    before: bytes,
    after: bytes,
    regions: list[dict[str, int]],
    offset: int | None,
    height: int | None,
) -> list[Rendered]:
    """One side-by-side crop per changed region, top to bottom, at most MAX_CROPS at a time:
    with ``offset``/``height``, the regions whose top edge lies in that band. The last note
    says where the next ones are when some are left out."""
    ordered = sorted((Region(**r) for r in regions), key=lambda r: (r.y, r.x))
    where = ""
    top = 0
    if offset is not None or height is not None:
        top, size = offset or 0, height or PAGE_HEIGHT
        if top < 0 or size < 1:
            raise InvalidInput("pxPagination needs offset >= 0 and height >= 1")
        ordered = [r for r in ordered if top <= r.y < top + size]
        where = f" starting in rows {top}-{top + size - 1}"
        if not ordered:
            return [_nothing_here(after, top, size, len(regions))]
    shown, rest = ordered[:MAX_CROPS], ordered[MAX_CROPS:]
    crops = crop_regions(before, after, shown, padding=CROP_PADDING, least=CROP_LEAST)
    out = []
    for i, crop in enumerate(crops, 1):
        r = crop.region
        note = (
            f"region {i} of {len(ordered)}{where} ({len(regions)} in the diff): {r.width}x"
            f"{r.height} at ({r.x}, {r.y}), {r.changed_pixels} px changed; before on the left, "
            "after on the right"
        )
        if i == len(crops) and rest:
            # Progress even when more than MAX_CROPS regions start on one row.
            after_row = max(rest[0].y, top + 1)
            note += (
                f". {len(rest)} more region(s) not shown: ask again with pxPagination "
                f"{{offset: {after_row}}}"
            )
        wide = 2 * crop.width + GUTTER
        out.append(Rendered(f"region {i}", crop.side_by_side_png, wide, crop.height, note))
    return out


def _nothing_here(after: bytes, top: int, size: int, total: int) -> Rendered:
    """A band of the after image where no changed region starts, saying so."""
    page = _page(after, top, size, "after")
    return Rendered(
        page.label,
        page.png,
        page.width,
        page.height,
        f"no changed region starts in rows {top}-{top + size - 1} ({total} in the diff); this is "
        "the after image there",
    )


def story_image(
    env: Env, actor: Actor, story_id: str, *, offset: int | None = None, height: int | None = None
) -> Rendered:
    """A story's current image (its baseline's, for a removed story), unchanged ones included."""
    with env.db.read() as s:
        story = scoping.owned(s, Story, story_id, actor, "story")
        image_id = story.image_id
        if image_id is None and story.baseline_id:
            from viewfinder.store.models import Baseline

            base = s.get(Baseline, story.baseline_id)
            image_id = base.image_id if base else None
        sha = s.scalar(select(Image.sha256).where(Image.id == image_id)) if image_id else None
    if sha is None:
        raise NotFound(f"story {story_id} has no image")
    return _page(env.blobs.get(sha), offset, height, story_id)


def render(
    env: Env,
    actor: Actor,
    *,
    diff_id: str | None = None,
    story_id: str | None = None,
    kind: str = "diff",
    offset: int | None = None,
    height: int | None = None,
    names: tuple[str, str] = ("diff_id", "story_id"),
) -> tuple[list[Rendered], str | None]:
    """Images of a diff, or a story's current image (any story, unchanged ones too): exactly
    one of the two, under the caller's ``names`` for them. Returns the images and the diff
    whose threads belong with them (a story's own diff; None for a removed story)."""
    which = selectors.exactly_one(dict(zip(names, (diff_id, story_id), strict=True)))
    if which == names[0]:
        assert diff_id is not None
        return render_diff(env, actor, diff_id, kind, offset=offset, height=height), diff_id
    assert story_id is not None
    image = story_image(env, actor, story_id, offset=offset, height=height)
    with env.db.read() as s:
        story = scoping.owned(s, Story, story_id, actor, "story")
        return [image], story.comparison_id
