"""Pull requests: what a PR changed across its builds, and one comment body for all of its
screenshots."""

from __future__ import annotations

from sqlalchemy import select

from viewfinder.errors import InvalidInput, NotFound
from viewfinder.services import builds, contexts, images
from viewfinder.services.builds.records import Counts, StoryList
from viewfinder.services.env import Actor, Env
from viewfinder.services.pagination import page_limit
from viewfinder.services.records import (
    Record,
)
from viewfinder.services.text import markdown_text
from viewfinder.store.models import Build, Comparison, Image, Story


class Changeset(Record):
    repo: str | None
    pr_number: int
    builds: list[str]
    counts: Counts
    changed: StoryList
    new: StoryList
    removed: StoryList
    failed: StoryList


CHANGE_STATES = ("changed", "new", "removed", "failed")


def _pr_builds(s: object, actor: Actor, repo: str | None, pr_number: int) -> list[Build]:
    query = select(Build).where(Build.project_id == actor.project_id, Build.pr_number == pr_number)
    if repo is not None:
        query = query.where(Build.repo == repo)
    return list(s.scalars(query.order_by(Build.id)))  # type: ignore[attr-defined]


def get_pr_changeset(
    env: Env,
    actor: Actor,
    *,
    pr_number: int,
    repo: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> Changeset:
    """Every story the PR changed, across all its builds: for each name + variant, its state in
    the newest build that has it. Lists hold ``limit`` (25) of each state, from ``offset`` on
    (by name and variant)."""
    number = contexts.check_pr(pr_number)
    assert number is not None
    repo = contexts.check_repo(repo)
    size = page_limit(limit)
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidInput(f"offset must be an integer of 0 or more (got {offset!r})")
    with env.db.read() as s:
        pr_builds = _pr_builds(s, actor, repo, number)
        if not pr_builds:
            raise NotFound(f"no build for PR #{number} in this project")
        latest: dict[tuple[str, str], Story] = {}
        for build in pr_builds:
            for story in s.scalars(select(Story).where(Story.build_id == build.id)):
                latest[(story.name, story.variant)] = story
        by_state: dict[str, list[Story]] = {st: [] for st in CHANGE_STATES}
        for key in sorted(latest):
            story = latest[key]
            if story.state in by_state:
                by_state[story.state].append(story)
        lists = {
            st: StoryList(
                items=builds.story_records(env, s, rows[offset : offset + size]), next_cursor=None
            )
            for st, rows in by_state.items()
        }
        return Changeset(
            repo=repo,
            pr_number=number,
            builds=[b.id for b in pr_builds],
            counts=Counts(**{st: len(rows) for st, rows in by_state.items()}),
            **lists,
        )


def pr_comment(env: Env, actor: Actor, *, pr_number: int, repo: str | None = None) -> str:
    """One Markdown comment for the PR: its pushed screenshots and its builds' changes."""
    number = contexts.check_pr(pr_number)
    assert number is not None
    repo = contexts.check_repo(repo)
    with env.db.read() as s:
        context = None
        if repo is not None:
            context = contexts.find_context(s, actor.project_id, "github_pr", f"{repo}#{number}")
        pr_builds = _pr_builds(s, actor, repo, number)
        if context is None and not pr_builds:
            raise NotFound(f"nothing was pushed or uploaded for PR #{number}")
        title = f"{repo}#{number}" if repo else f"#{number}"
        lines = [f"## Viewfinder: screenshots of {title}", ""]
        if context is not None:
            shots = list(
                s.scalars(
                    select(Image)
                    .where(Image.context_id == context.id, Image.expired_at.is_(None))
                    .order_by(Image.name, Image.variant)
                )
            )
            for image in shots:
                diff = s.scalar(
                    select(Comparison)
                    .where(Comparison.image_id == image.id)
                    .order_by(Comparison.id.desc())
                    .limit(1)
                )
                status = _diff_status(diff)
                label = image.name + (f" @ {image.variant}" if image.variant else "")
                heading = f"### {markdown_text(label)}{status}"
                lines += [heading, "", images.markdown(env, image), ""]
        if pr_builds:
            build = pr_builds[-1]
            record = builds.build_record(env, s, build)
            c = record.counts
            lines += [
                f"**Latest build** [{build.id}]({record.url}) for `{build.commit_sha[:12]}`: "
                f"{c.changed} changed, {c.new} new, {c.removed} removed, {c.failed} failed, "
                f"{c.unchanged} unchanged; review: {record.review}.",
                "",
            ]
        return "\n".join(lines).rstrip() + "\n"


def _diff_status(diff: Comparison | None) -> str:
    if diff is None:
        return ""
    if diff.state == "requested":
        return " (comparing)"
    if diff.state == "failed":
        return " (comparison failed)"
    if diff.registered:
        return " (new baseline)"
    if not diff.changed:
        return " (unchanged)"
    approved = ", approved" if diff.approved_at else ""
    return f" (changed: {diff.diff_ratio:.2%}{approved})"
