"""Writing builds: opening one for a commit, uploading its stories' screenshots (each compared
with its baseline), and finalizing it. A story owns its comparison and is settled by it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select, tuple_
from sqlalchemy.orm import Session

from viewfinder.errors import Conflict, InvalidInput
from viewfinder.ids import new_id
from viewfinder.services import baselines, comparisons, contexts, diffs, images, storage
from viewfinder.services.builds.reading import (
    _get_build,
    build_record,
    check_sha,
    counts,
    story_records,
    verdict_of,
)
from viewfinder.services.builds.records import BuildRecord, StoryRecord
from viewfinder.services.env import Actor, Env
from viewfinder.services.text import check_text
from viewfinder.store.models import Baseline, Build, Comparison, Context, Image, Story, utcnow

# A story's place among its build's stories of the same state: likely regressions first.
RANKS = {"likely_regression": 0, "likely_intended": 1, "noise": 2}
STORY_STATES = {
    None: "pending",
    "failed": "failed",
    "registered": "new",
    "changed": "changed",
    "unchanged": "unchanged",
}


def story_state(row: Comparison) -> str:
    return STORY_STATES[comparisons.outcome(row)]


def settle_story(s: Session, row: Comparison) -> None:
    """Carry a finished comparison into its story and, when it was the last, its build.
    Rows are locked in one order by every worker: the comparison (the caller), its story, the
    build; and each is written once, so workers finishing stories of one build never
    deadlock."""
    story = s.get(Story, row.owner_id)
    if story is None:
        return
    story.state = story_state(row)
    story.rank = RANKS.get(comparisons.verdict(row) or "", 1)
    s.flush()
    build = s.get(Build, story.build_id, with_for_update=True)  # see reading._get_build
    if build is not None and build.status == "comparing":
        pending = s.scalar(
            select(func.count()).where(Story.build_id == build.id, Story.state == "pending")
        )
        if not pending:
            _complete(s, build)


comparisons.register_owner("story", settle_story)


def _complete(s: Session, build: Build) -> None:
    """The build's last comparison is done: its verdict is decided, once."""
    s.flush()
    build.status = "done"
    build.completed_at = utcnow()
    build.verdict = verdict_of(counts(s, build.id))


def create_build(
    env: Env,
    actor: Actor,
    *,
    commit_sha: str,
    branch: str | None = None,
    repo: str | None = None,
    pr_number: int | None = None,
) -> BuildRecord:
    """Open a build to upload stories into. A PR number needs the repo. Raises InvalidInput,
    Forbidden."""
    actor.require("upload", "upload screenshots")
    sha = check_sha(commit_sha)
    repo = contexts.check_repo(repo)
    pr_number = contexts.check_pr(pr_number)
    if branch is not None:
        branch = check_text("branch", branch, maximum=300, multiline=False)
    with env.db.write() as s:
        context = None
        if pr_number is not None:
            key = contexts.pr_key(repo, pr_number)
            context = contexts.get_or_create(
                s, actor.project_id, "github_pr", key, repo=repo, pr_number=pr_number
            )
        build = Build(
            id=new_id("bld"),
            project_id=actor.project_id,
            commit_sha=sha,
            branch=branch,
            repo=repo,
            pr_number=pr_number,
            context_id=context.id if context else None,
            created_by=actor.key_id,
        )
        s.add(build)
        s.flush()
        return build_record(env, s, build)


@dataclass(frozen=True)
class StoryUpload:
    name: str
    variant: str | None
    data: bytes


MAX_BATCH = 200


def add_story(
    env: Env, actor: Actor, build_id: str, *, name: str, variant: str | None, data: bytes
) -> StoryRecord:
    """Upload one story's screenshot; see add_stories."""
    return add_stories(env, actor, build_id, [StoryUpload(name, variant, data)])[0]


def add_stories(
    env: Env, actor: Actor, build_id: str, uploads: Sequence[StoryUpload]
) -> list[StoryRecord]:
    """Upload stories' screenshots and request their comparisons, all or none: every file is
    checked before anything is stored. Uploading the same bytes again under the same name is a
    no-op (safe to retry); other bytes under a taken name conflict.
    Raises InvalidInput, InvalidImage, ImageTooLarge, QuotaExceeded, Conflict, NotFound."""
    actor.require("upload", "upload screenshots")
    if not 1 <= len(uploads) <= MAX_BATCH:
        raise InvalidInput(f"send 1 to {MAX_BATCH} stories at a time (got {len(uploads)})")
    checked: list[tuple[str, str, images.CheckedFile]] = []
    for upload in uploads:
        name = images.check_name(upload.name)
        variant = images.check_viewport(upload.variant)
        checked.append((name, variant, images.check_png(env, upload.data, what=f"story {name!r}")))
    keys = [(name, variant) for name, variant, _ in checked]
    if len(set(keys)) != len(keys):
        raise InvalidInput("the same story name and variant appears twice in one upload")
    with env.db.read() as s:
        _get_build(s, actor, build_id)
    claimed = storage.claim(env, actor.project_id, [f for _, _, f in checked])
    try:
        return _insert_stories(env, actor, build_id, checked, keys)
    except BaseException:
        storage.forget(env, claimed)
        raise


def _insert_stories(
    env: Env,
    actor: Actor,
    build_id: str,
    checked: list[tuple[str, str, images.CheckedFile]],
    keys: list[tuple[str, str]],
) -> list[StoryRecord]:
    with env.db.write() as s:
        build = _get_build(s, actor, build_id, lock="share")
        if build.status != "uploading":
            raise Conflict(f"build {build_id} is finalized: open a new build for new screenshots")
        existing = _existing_stories(s, build.id, set(keys))
        fresh = []
        for name, variant, file in checked:
            old = existing.get((name, variant))
            if old is not None and old[1] != file.sha256:
                raise Conflict(
                    f"build {build_id} already has a story {name!r}"
                    + (f" at {variant}" if variant else "")
                    + " with other bytes: story names must be unique within a build"
                )
            if old is None:
                fresh.append((name, variant, file))
        context = s.get(Context, build.context_id) if build.context_id else None
        known = baselines.current_many(s, actor.project_id, {(n, v) for n, v, _ in fresh}, context)
        rows = images.insert_images(
            s,
            actor,
            [
                (file, images.NewImage(name, variant, "build", build.id, None, build.commit_sha))
                for name, variant, file in fresh
            ],
        )
        made: dict[tuple[str, str], Story] = {}
        for image in rows:
            key = (image.name, image.variant)
            story_id = new_id("sty")
            diff = diffs.request(
                s,
                actor,
                image,
                context=context,
                owner_kind="story",
                owner_id=story_id,
                build_id=build.id,
                known=known.get(key),
            )
            made[key] = Story(
                id=story_id,
                project_id=actor.project_id,
                build_id=build.id,
                name=image.name,
                variant=image.variant,
                image_id=image.id,
                comparison_id=diff.id,
                state=story_state(diff),
            )
        s.add_all(made.values())
        s.flush()
        ordered = [made.get(key) or existing[key][0] for key in keys]
        return story_records(env, s, ordered)


def _existing_stories(
    s: Session, build_id: str, keys: set[tuple[str, str]]
) -> dict[tuple[str, str], tuple[Story, str]]:
    rows = s.execute(
        select(Story, Image.sha256)
        .join(Image, Image.id == Story.image_id)
        .where(Story.build_id == build_id, tuple_(Story.name, Story.variant).in_(sorted(keys)))
    ).all()
    return {(story.name, story.variant): (story, sha) for story, sha in rows}


def finalize_build(env: Env, actor: Actor, build_id: str) -> BuildRecord:
    """Close the build for uploads: baselines with no story in it are reported removed, and the
    build completes when its last comparison does. Idempotent."""
    actor.require("upload", "upload screenshots")
    with env.db.write() as s:
        build = _get_build(s, actor, build_id, lock="update")
        if build.status != "uploading":
            return build_record(env, s, build)
        present = set(
            s.execute(select(Story.name, Story.variant).where(Story.build_id == build.id)).all()
        )
        context = s.get(Context, build.context_id) if build.context_id else None
        for base in _current_baselines(s, actor.project_id, context):
            if (base.name, base.variant) not in present:
                s.add(
                    Story(
                        id=new_id("sty"),
                        project_id=actor.project_id,
                        build_id=build.id,
                        name=base.name,
                        variant=base.variant,
                        baseline_id=base.id,
                        state="removed",
                    )
                )
        build.finalized_at = utcnow()
        pending = s.scalar(
            select(func.count()).where(Story.build_id == build.id, Story.state == "pending")
        )
        if pending:
            build.status = "comparing"
        else:
            _complete(s, build)
        s.flush()
        return build_record(env, s, build)


def _current_baselines(s: Session, project_id: str, context: Context | None) -> list[Baseline]:
    """The baselines a build is expected to cover: shared ones, overlaid by the PR's own."""
    current: dict[tuple[str, str], Baseline] = {}
    scopes: list[tuple[str, str | None]] = [("shared", None)]
    if baselines.uses_own_baselines(context) and context is not None:
        scopes.append(("context", context.id))
    for scope, context_id in scopes:
        query = select(Baseline).where(
            Baseline.project_id == project_id,
            Baseline.scope == scope,
            Baseline.ended_at.is_(None),
        )
        if context_id is not None:
            query = query.where(Baseline.context_id == context_id)
        for row in s.scalars(query):
            current[(row.name, row.variant)] = row
    return list(current.values())
