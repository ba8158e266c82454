"""Writing builds: opening one for a commit, uploading its stories' screenshots (each compared
with its baseline), and finalizing it. A story owns its comparison and is settled by it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import func, select, tuple_
from sqlalchemy.orm import Session

from viewfinder.errors import Conflict, InvalidInput
from viewfinder.ids import new_id
from viewfinder.imaging.compare import check_scale
from viewfinder.jobs import registry
from viewfinder.services import (
    baselines,
    commit_status,
    comparisons,
    contexts,
    diffs,
    images,
    permissions,
    storage,
)
from viewfinder.services.builds.reading import (
    _get_build,
    build_record,
    counts,
    story_records,
    verdict_of,
)
from viewfinder.services.builds.records import BuildRecord, StoryRecord
from viewfinder.services.env import Actor, Env
from viewfinder.services.text import check_sha, check_text
from viewfinder.store.models import Build, Comparison, Context, Image, Project, Story, utcnow

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


comparisons.register_owner("story", settle_story, conclude=diffs.inherit_decision)


def _complete(s: Session, build: Build) -> None:
    """The build's last comparison is done: its verdict is decided, once."""
    s.flush()
    build.status = "done"
    build.completed_at = utcnow()
    build.verdict = verdict_of(counts(s, build.id))
    commit_status.build_changed(s, build)


def create_build(
    env: Env,
    actor: Actor,
    *,
    commit_sha: str,
    branch: str | None = None,
    repo: str | None = None,
    pr_number: int | None = None,
    idempotency_key: str | None = None,
) -> BuildRecord:
    """Open a build to upload stories into. A PR number needs the repo. With an
    ``idempotency_key``, opening the same build again (a retry) returns the first one.
    Raises InvalidInput, Forbidden, Conflict (the key names another commit's build)."""
    permissions.require(actor, "create_build")
    sha = check_sha(commit_sha)
    repo = contexts.check_repo(repo)
    pr_number = contexts.check_pr(pr_number)
    if branch is not None:
        branch = check_text("branch", branch, maximum=300, multiline=False)
    if idempotency_key is not None:
        idempotency_key = check_text(
            "idempotency_key", idempotency_key, maximum=100, multiline=False
        )
    with env.db.write() as s:
        if idempotency_key is not None:
            # The lock makes two retries arriving together see each other's build.
            s.execute(select(Project.id).where(Project.id == actor.project_id).with_for_update())
            same = s.scalar(
                select(Build).where(
                    Build.project_id == actor.project_id, Build.idempotency_key == idempotency_key
                )
            )
            if same is not None:
                if (same.commit_sha, same.branch, same.repo, same.pr_number) != (
                    sha,
                    branch,
                    repo,
                    pr_number,
                ):
                    raise Conflict(
                        f"idempotency key {idempotency_key!r} opened build {same.id} of another "
                        "commit, branch or PR: use a new key for a new build",
                        build_id=same.id,
                    )
                return build_record(env, s, same)
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
            idempotency_key=idempotency_key,
            created_by=actor.key_id,
        )
        s.add(build)
        s.flush()
        commit_status.build_changed(s, build)
        return build_record(env, s, build)


@dataclass(frozen=True)
class StoryUpload:
    name: str
    variant: str | None
    data: bytes
    # Set when the screenshot could not be taken: ``data`` is a placeholder saying why, and
    # the story is failed with this reason instead of compared.
    failure: str | None = None
    scale: float | None = None  # the device scale it was taken at, when known


MAX_BATCH = 200
FAILURE_MAX = 2000  # characters of a failed screenshot's reason


def add_story(
    env: Env,
    actor: Actor,
    build_id: str,
    *,
    name: str,
    variant: str | None,
    data: bytes,
    failure: str | None = None,
    scale: float | None = None,
) -> StoryRecord:
    """Upload one story's screenshot (or, with ``failure``, the placeholder of one that could
    not be taken); see add_stories."""
    upload = StoryUpload(name, variant, data, failure, scale)
    return add_stories(env, actor, build_id, [upload])[0]


def add_stories(
    env: Env, actor: Actor, build_id: str, uploads: Sequence[StoryUpload]
) -> list[StoryRecord]:
    """Upload stories' screenshots and request their comparisons, all or none: every file is
    checked before anything is stored. Uploading the same bytes again under the same name is a
    no-op (safe to retry); other bytes under a taken name conflict.
    Raises InvalidInput, InvalidImage, ImageTooLarge, QuotaExceeded, Conflict, NotFound."""
    permissions.require(actor, "add_stories")
    if not 1 <= len(uploads) <= MAX_BATCH:
        raise InvalidInput(f"send 1 to {MAX_BATCH} stories at a time (got {len(uploads)})")
    known = images.known_blobs(env, (u.data for u in uploads))
    checked: list[tuple[str, str, images.CheckedFile]] = []
    failures: dict[tuple[str, str], str] = {}
    scales: dict[tuple[str, str], float | None] = {}
    for upload in uploads:
        name = images.check_name(upload.name)
        variant = images.check_viewport(upload.variant)
        scales[(name, variant)] = check_scale(upload.scale)
        what = f"story {name!r}"
        checked.append((name, variant, images.check_png(env, upload.data, what=what, known=known)))
        if upload.failure is not None:
            failures[(name, variant)] = check_text(
                "failure", upload.failure, maximum=FAILURE_MAX, multiline=True
            )
    keys = [(name, variant) for name, variant, _ in checked]
    if len(set(keys)) != len(keys):
        raise InvalidInput("the same story name and variant appears twice in one upload")
    with env.db.read() as s:
        _get_build(s, actor, build_id)
    claimed = storage.claim(env, actor.project_id, [f for _, _, f in checked])
    try:
        return _insert_stories(env, actor, build_id, checked, keys, failures, scales)
    except BaseException:
        storage.forget(env, claimed)
        raise


def _insert_stories(
    env: Env,
    actor: Actor,
    build_id: str,
    checked: list[tuple[str, str, images.CheckedFile]],
    keys: list[tuple[str, str]],
    failures: dict[tuple[str, str], str],
    scales: dict[tuple[str, str], float | None],
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
                (
                    file,
                    images.NewImage(
                        name,
                        variant,
                        "build",
                        build.id,
                        None,
                        build.commit_sha,
                        scale=scales[(name, variant)],
                    ),
                )
                for name, variant, file in fresh
            ],
        )
        made: dict[tuple[str, str], Story] = {}
        for image in rows:
            key = (image.name, image.variant)
            story_id = new_id("sty")
            if key in failures:
                diff = diffs.failed(
                    s,
                    actor,
                    image,
                    failures[key],
                    context=context,
                    owner_kind="story",
                    owner_id=story_id,
                    build_id=build.id,
                )
            else:
                diff = diffs.request(
                    s,
                    actor,
                    image,
                    context=context,
                    owner_kind="story",
                    owner_id=story_id,
                    build_id=build.id,
                    known=known.get(key),
                    register_now=False,
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
    """Close the build for uploads. Its new stories become baselines now (a build never
    finalized registers nothing); the stories its predecessor had and it has not are reported
    removed; it completes when its last comparison does. Idempotent."""
    permissions.require(actor, "finalize_build")
    with env.db.write() as s:
        build = _get_build(s, actor, build_id, lock="update")
        if build.status != "uploading":
            return build_record(env, s, build)
        context = s.get(Context, build.context_id) if build.context_id else None
        _register_new(s, actor, build, context)
        _report_removed(s, actor, build, context)
        build.finalized_at = utcnow()
        pending = s.scalar(
            select(func.count()).where(Story.build_id == build.id, Story.state == "pending")
        )
        if pending:
            build.status = "comparing"
            commit_status.build_changed(s, build)
        else:
            _complete(s, build)
        s.flush()
        return build_record(env, s, build)


def _register_new(s: Session, actor: Actor, build: Build, context: Context | None) -> None:
    """The build's new stories become their names' baselines; a name another build registered
    in the meantime is compared with that baseline instead."""
    rows = list(
        s.execute(
            select(Story, Comparison)
            .join(Comparison, Comparison.id == Story.comparison_id)
            .where(Story.build_id == build.id, Comparison.registered.is_(True))
            .order_by(Story.name, Story.variant)
        ).all()
    )
    if not rows:
        return
    keys = {(story.name, story.variant) for story, _ in rows}
    baselines.lock_names(s, actor.project_id, keys)
    now = baselines.current_many(s, actor.project_id, keys, context)
    first = [
        (story.name, story.variant, row.image_id, row.id)
        for story, row in rows
        if (story.name, story.variant) not in now
    ]
    baselines.register_many(s, actor, first, context)
    for story, _ in rows:
        known = now.get((story.name, story.variant))
        if known is None:
            continue
        image = s.get(Image, story.image_id)
        assert image is not None
        again = diffs.request(
            s,
            actor,
            image,
            context=context,
            owner_kind="story",
            owner_id=story.id,
            build_id=build.id,
            known=known,
        )
        story.comparison_id = again.id
        story.state = story_state(again)


def predecessor(s: Session, build: Build) -> Build | None:
    """The build this one follows: the newest earlier finalized build of the same PR, else of
    the same branch, else of the main line (builds outside PRs)."""
    earlier = select(Build).where(
        Build.project_id == build.project_id,
        Build.id < build.id,
        Build.finalized_at.is_not(None),
    )
    choices = []
    if build.context_id is not None:
        choices.append(earlier.where(Build.context_id == build.context_id))
    if build.branch is not None:
        choices.append(earlier.where(Build.branch == build.branch, Build.context_id.is_(None)))
    choices.append(earlier.where(Build.context_id.is_(None)))
    for query in choices:
        found = s.scalar(query.order_by(Build.id.desc()).limit(1))
        if found is not None:
            return found
    return None


def _report_removed(s: Session, actor: Actor, build: Build, context: Context | None) -> None:
    """Stories the predecessor build had that this one has not, shown with their baseline.
    Names that only pushes (or a merged PR) ever had are not a build's, so never removed."""
    before = predecessor(s, build)
    if before is None:
        return
    present = set(
        s.execute(select(Story.name, Story.variant).where(Story.build_id == build.id)).all()
    )
    had = set(
        s.execute(
            select(Story.name, Story.variant).where(
                Story.build_id == before.id, Story.state != "removed"
            )
        ).all()
    )
    gone = {(name, variant) for name, variant in had if (name, variant) not in present}
    current = baselines.current_many(s, actor.project_id, gone, context)
    for name, variant in sorted(gone):
        found = current.get((name, variant))
        if found is None:
            continue  # its baseline was deleted since: nothing to show as removed
        s.add(
            Story(
                id=new_id("sty"),
                project_id=actor.project_id,
                build_id=build.id,
                name=name,
                variant=variant,
                baseline_id=found[0].id,
                state="removed",
            )
        )


def expire_stale(env: Env) -> int:
    """Builds left uploading past settings.build_expiry_seconds expire: never finalized, they
    registered no baseline, and their images stop being delivered. Returns how many."""
    cutoff = utcnow() - timedelta(seconds=env.settings.build_expiry_seconds)
    expired = 0
    with env.db.write() as s:
        stale = list(
            s.scalars(
                select(Build)
                .where(Build.status == "uploading", Build.created_at < cutoff)
                .with_for_update(skip_locked=True)
            )
        )
        for build in stale:
            build.status = "expired"
            build.verdict = "failed"
            build.completed_at = utcnow()
            for image in s.scalars(
                select(Image).where(Image.build_id == build.id, Image.expired_at.is_(None))
            ):
                images.expire_row(image, "build_expired")
            expired += 1
    return expired


registry.register_periodic(registry.Periodic("expire-stale-builds", 300.0, expire_stale))
