"""Pages for what outlives a build: baselines with their history, and open contexts (PRs)."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import Response

from viewfinder.errors import NotFound
from viewfinder.plumbing.offloop import call
from viewfinder.services import baselines, contexts, projects, prs
from viewfinder.services.baselines import BaselineRecord
from viewfinder.services.contexts import ContextRecord
from viewfinder.services.env import Actor, Env
from viewfinder.services.prs import Changeset
from viewfinder.web.present import page, render
from viewfinder.web.sessions import env_of, viewer

router = APIRouter(include_in_schema=False)


@dataclass(frozen=True)
class Lineage:
    """One name + variant: its current baselines (shared, per PR) and what they replaced."""

    name: str
    variant: str
    current: list[BaselineRecord]
    history: list[BaselineRecord]


def _lineages(items: list[BaselineRecord]) -> list[Lineage]:
    grouped: dict[tuple[str, str], list[BaselineRecord]] = {}
    for record in items:
        grouped.setdefault((record.name, record.variant), []).append(record)
    out = []
    for (name, variant), rows in grouped.items():
        newest_first = sorted(rows, key=lambda r: r.id, reverse=True)
        out.append(
            Lineage(
                name,
                variant,
                [r for r in newest_first if r.ended_at is None],
                [r for r in newest_first if r.ended_at is not None],
            )
        )
    return out


def _baselines(
    env: Env, actor: Actor, cursor: str | None
) -> tuple[list[Lineage], str | None, dict[str, str]]:
    listed = baselines.list_baselines(env, actor, cursor=cursor, history=True)
    return _lineages(listed.items), listed.next_cursor, projects.key_labels(env, actor)


@router.get("/baselines")
@page
async def baselines_page(request: Request, cursor: str | None = None) -> Response:
    person = await viewer(request)
    lineages, next_cursor, names = await call(
        _baselines, env_of(request), person.actor, cursor or None
    )
    return render(
        "baselines.html",
        person,
        lineages=lineages,
        next_cursor=next_cursor,
        names=names,
        can_approve=person.actor.can("approve"),
        nav="baselines",
    )


@dataclass(frozen=True)
class OpenContext:
    context: ContextRecord
    changeset: Changeset | None


def _contexts(env: Env, actor: Actor) -> list[OpenContext]:
    out = []
    for context in contexts.list_contexts(env, actor, status="open"):
        changeset = None
        if context.pr_number is not None:
            try:
                changeset = prs.get_pr_changeset(
                    env, actor, pr_number=context.pr_number, repo=context.repo, limit=100
                )
            except NotFound:  # a PR with pushed screenshots and no build yet
                changeset = None
        out.append(OpenContext(context, changeset))
    return out


@router.get("/contexts")
@page
async def contexts_page(request: Request) -> Response:
    person = await viewer(request)
    found = await call(_contexts, env_of(request), person.actor)
    return render("contexts.html", person, contexts=found, nav="contexts")
