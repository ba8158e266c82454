"""The dashboard's review pages: builds, a build, a story under review."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import RedirectResponse, Response

from viewfinder.errors import InvalidInput
from viewfinder.plumbing.offloop import call
from viewfinder.services import builds
from viewfinder.web import views
from viewfinder.web.present import page, render
from viewfinder.web.sessions import env_of, viewer

router = APIRouter(include_in_schema=False)


@router.get("/")
async def home() -> Response:
    return RedirectResponse("/builds", status_code=303)


def _pr(text: str | None) -> int | None:
    if not text:
        return None
    if not text.strip().lstrip("#").isdigit():
        raise InvalidInput(f"a PR filter is a number (got {text!r})")
    return int(text.strip().lstrip("#"))


@router.get("/builds")
@page
async def builds_page(
    request: Request,
    branch: str | None = None,
    pr: str | None = None,
    status: str | None = None,
    cursor: str | None = None,
) -> Response:
    person = await viewer(request)
    filters = {"branch": branch or None, "pr": pr or None, "status": status or None}
    listed = await call(
        builds.list_builds,
        env_of(request),
        person.actor,
        cursor=cursor or None,
        branch=filters["branch"],
        pr_number=_pr(filters["pr"]),
        status=filters["status"],
    )
    live = any(b.status != "done" for b in listed.items)
    return render(
        "builds.html",
        person,
        builds=listed.items,
        next_cursor=listed.next_cursor,
        filters=filters,
        statuses=builds.BUILD_STATUSES,
        live=live,
        nav="builds",
    )


@router.get("/builds/{build_id}")
@page
async def build_page(request: Request, build_id: str) -> Response:
    person = await viewer(request)
    view = await call(views.build_view, env_of(request), person.actor, build_id)
    return render("build.html", person, view=view, nav="builds")


@router.get("/stories/{story_id}")
@page
async def story_page(
    request: Request,
    story_id: str,
    mode: Annotated[str | None, Query(max_length=20)] = None,
    thread: Annotated[str | None, Query(max_length=60)] = None,
) -> Response:
    person = await viewer(request)
    view = await call(views.story_view, env_of(request), person.actor, story_id)
    chosen = views.pick_mode(view, mode)
    data = {
        "storyId": view.story.id,
        "diffId": view.diff.id if view.diff else None,
        "mode": chosen,
        "thread": thread,
        "pageRows": views.PAGE_ROWS,
        "panes": {k: p.data() for k, p in view.panes.items()},
        "regions": [r.model_dump() for r in view.diff.regions] if view.diff else [],
        "markers": views.markers(view.threads),
        "previous": f"/stories/{view.previous.id}" if view.previous else None,
        "next": f"/stories/{view.next.id}" if view.next else None,
        "canComment": person.actor.can("review") and view.diff is not None,
    }
    return render(
        "story.html",
        person,
        view=view,
        mode=chosen,
        selected=thread,
        data=data,
        can_review=person.actor.can("review"),
        can_approve=person.actor.can("approve"),
        nav="builds",
    )
