"""Reading builds: a build's record, verdict and counts, its stories a page at a time (likely
regressions first), selecting a build by id, commit or PR, and listing builds."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Executable, and_, bindparam, func, select, tuple_
from sqlalchemy.orm import Session

from viewfinder.errors import InvalidInput, NotFound
from viewfinder.services import comparisons, contexts, diffs, lifecycle, scoping, selectors
from viewfinder.services.builds.records import (
    BuildDetail,
    BuildRecord,
    Counts,
    StoryList,
    StoryRecord,
)
from viewfinder.services.env import Actor, Env
from viewfinder.services.pagination import Cursor, page_limit
from viewfinder.services.records import Page, Urls
from viewfinder.services.shortreads import short_read
from viewfinder.services.text import check_sha, check_text
from viewfinder.services.urls import file_url
from viewfinder.store.models import Baseline, Build, Comparison, Image, Story, Thread

LISTED_STATES = ("changed", "new", "removed", "failed", "unchanged")
BUILDS_DEFAULT, BUILDS_MAX = 20, 100


def _get_build(s: Session, actor: Actor, build_id: str, lock: str | None = None) -> Build:
    """The build, row-locked on PostgreSQL when ``lock`` is "share" (uploads, which may run
    side by side) or "update" (finalizing, and a worker completing the build): a build must
    not be finalized while a story is being added, nor completed by two transactions that
    each miss the other's last comparison."""
    options: dict[str, bool] | bool = {"read": True} if lock == "share" else lock == "update"
    return scoping.owned(s, Build, build_id, actor, "build", lock=options)


def counts(s: Session, build_id: str) -> Counts:
    return _tallies(s, [build_id])[build_id][0]


# The hottest reads (every list of builds) go through the session's connection with statements
# made once: building an ORM statement per call and running it through the ORM costs several
# times what the query itself does.
_STATES = (
    select(Story.build_id, Story.state, func.count())
    .where(Story.build_id.in_(bindparam("ids", expanding=True)))
    .group_by(Story.build_id, Story.state)
)
_DECISIONS = (
    select(Story.build_id, Comparison.decision, func.count())
    .join(Comparison, Story.comparison_id == Comparison.id)
    .where(Story.build_id.in_(bindparam("ids", expanding=True)), Story.state == "changed")
    .group_by(Story.build_id, Comparison.decision)
)
# What a build's record shows, as plain columns (rows, not ORM objects).
_BUILD_COLUMNS = (
    Build.id,
    Build.commit_sha,
    Build.branch,
    Build.repo,
    Build.pr_number,
    Build.context_id,
    Build.status,
    Build.verdict,
    Build.created_at,
    Build.finalized_at,
    Build.completed_at,
)


@functools.lru_cache(maxsize=64)
def _builds_query(
    branch: bool, pr: bool, status: bool, verdict: str | None, after: bool
) -> Executable:
    """A page of builds, newest first, with the filters given (their values are parameters),
    each build on as many rows as it has (story state, decision) pairs with their count: the
    page and its tallies in one statement."""
    query = select(*_BUILD_COLUMNS).where(Build.project_id == bindparam("project"))
    if branch:
        query = query.where(Build.branch == bindparam("branch"))
    if pr:
        query = query.where(Build.pr_number == bindparam("pr"))
    if status:
        query = query.where(Build.status == bindparam("status"))
    if verdict == "pending":
        query = query.where(Build.status != "done")
    elif verdict is not None:
        query = query.where(Build.status == "done", Build.verdict == bindparam("verdict"))
    if after:
        query = query.where(Build.id < bindparam("after"))
    page = query.order_by(Build.id.desc()).limit(bindparam("size")).subquery("page")
    return (
        select(page, Story.state, Comparison.decision, func.count(Story.id))
        .select_from(page)
        .outerjoin(Story, Story.build_id == page.c.id)
        .outerjoin(Comparison, and_(Story.comparison_id == Comparison.id, Story.state == "changed"))
        .group_by(*page.c, Story.state, Comparison.decision)
        .order_by(page.c.id.desc())
    )


def _paged_tallies(rows: Sequence[Any]) -> tuple[list[Any], dict[str, tuple[Counts, str]]]:
    """The builds of _builds_query's rows, in order, and each one's counts and review state."""
    builds: dict[str, Any] = {}
    states: dict[str, Counter[str]] = {}
    decisions: dict[str, Counter[str]] = {}
    for row in rows:
        if row.id not in builds:
            builds[row.id] = row
            states[row.id], decisions[row.id] = Counter(), Counter()
        *_, state, decision, n = row
        if state is not None:
            states[row.id][state] += int(n)
        if decision is not None:
            decisions[row.id][decision] += int(n)
    return list(builds.values()), {b: _tally(states[b], decisions[b]) for b in builds}


def _tallies(s: Session, build_ids: list[str]) -> dict[str, tuple[Counts, str]]:
    """Each build's story counts and review state, in two queries for any number of builds."""
    connection = s.connection()
    states: dict[str, Counter[str]] = {b: Counter() for b in build_ids}
    for build_id, state, n in connection.execute(_STATES, {"ids": build_ids}):
        states[build_id][state] = int(n)
    decisions: dict[str, Counter[str]] = {b: Counter() for b in build_ids}
    for build_id, decision, n in connection.execute(_DECISIONS, {"ids": build_ids}):
        decisions[build_id][decision] = int(n)
    return {b: _tally(states[b], decisions[b]) for b in build_ids}


def _tally(states: Counter[str], decisions: Counter[str]) -> tuple[Counts, str]:
    return Counts(**{k: states.get(k, 0) for k in Counts.model_fields}), _review_state(decisions)


def _review_state(decisions: Counter[str]) -> str:
    if not decisions:
        return "none"
    if decisions.get("denied"):
        return "denied"
    if decisions.get("pending"):
        return "pending"
    return "accepted"


def build_url(env: Env, build_id: str) -> str:
    return f"{env.settings.public_url}/builds/{build_id}"


VERDICTS = ("pending", "unchanged", "changed", "failed")


def verdict_of(tally: Counts) -> str:
    """A finished build's verdict from its stories: failed, changed (or removed), unchanged.
    Stored on the build when it completes, so that lists can filter on it."""
    if tally.failed:
        return "failed"
    if tally.changed or tally.removed:
        return "changed"
    return "unchanged"


def build_record(env: Env, s: Session, build: Build) -> BuildRecord:
    return build_records(env, s, [build])[0]


def build_records(
    env: Env,
    s: Session,
    found: Sequence[Any],
    tallies: dict[str, tuple[Counts, str]] | None = None,
) -> list[BuildRecord]:
    """Records of builds (ORM objects, or rows of _BUILD_COLUMNS), their counts and review
    states read together (unless ``tallies`` has them already)."""
    if not found:
        return []
    if tallies is None:
        tallies = _tallies(s, [b.id for b in found])
    records = []
    for build in found:
        tally, review = tallies[build.id]
        done = build.status in ("done", "expired") and build.verdict
        records.append(
            BuildRecord(
                id=build.id,
                commit_sha=build.commit_sha,
                branch=build.branch,
                repo=build.repo,
                pr_number=build.pr_number,
                context_id=build.context_id,
                status=build.status,
                verdict=build.verdict if done else "pending",
                review=review,
                counts=tally,
                url=build_url(env, build.id),
                created_at=build.created_at,
                finalized_at=build.finalized_at,
                completed_at=build.completed_at,
            )
        )
    return records


def story_records(env: Env, s: Session, stories: list[Story]) -> list[StoryRecord]:
    diff_ids = [st.comparison_id for st in stories if st.comparison_id]
    rows = (
        {d.id: d for d in s.scalars(select(Comparison).where(Comparison.id.in_(diff_ids)))}
        if diff_ids
        else {}
    )
    image_ids = [st.image_id for st in stories if st.image_id]
    image_ids += [d.base_image_id for d in rows.values() if d.base_image_id]
    removed_ids = [st.baseline_id for st in stories if st.baseline_id]
    removed_images = (
        dict(
            s.execute(
                select(Baseline.id, Baseline.image_id).where(Baseline.id.in_(removed_ids))
            ).all()
        )
        if removed_ids
        else {}
    )
    image_ids += list(removed_images.values())
    shas = (
        dict(s.execute(select(Image.id, Image.sha256).where(Image.id.in_(image_ids))).all())
        if image_ids
        else {}
    )
    threads = (
        dict(
            s.execute(
                select(Thread.subject_id, func.count())
                .where(
                    Thread.subject_type == "diff",
                    Thread.subject_id.in_(diff_ids),
                    lifecycle.unresolved_clause(),
                )
                .group_by(Thread.subject_id)
            ).all()
        )
        if diff_ids
        else {}
    )
    out = []
    for st in stories:
        diff = rows.get(st.comparison_id or "")
        base_image = diff.base_image_id if diff else removed_images.get(st.baseline_id or "")

        def url(image_id: str | None) -> str | None:
            sha = shas.get(image_id or "")
            return file_url(env, sha) if sha else None

        out.append(
            StoryRecord(
                id=st.id,
                build_id=st.build_id,
                name=st.name,
                variant=st.variant,
                state=st.state,
                image_id=st.image_id,
                diff_id=st.comparison_id,
                diff_ratio=diff.diff_ratio if diff else None,
                changed_pixels=diff.changed_pixels if diff else None,
                verdict=comparisons.verdict(diff) if diff else None,
                summary=diff.analysis.get("summary") if diff and diff.analysis else None,
                failure_reason=diff.failure_reason if diff else None,
                decision=diff.decision if diff and st.state in diffs.REVIEWABLE else None,
                open_threads=int(threads.get(st.comparison_id or "", 0)),
                urls=Urls(
                    baseline=url(base_image),
                    candidate=url(st.image_id),
                    diff=file_url(env, diff.diff_sha256) if diff and diff.diff_sha256 else None,
                ),
            )
        )
    return out


def _story_page(
    env: Env, s: Session, build_id: str, state: str, cursor: str | None, limit: int
) -> StoryList:
    # Likely regressions first, then by name (the rank is in the scope: cursors made before
    # stories were ranked cannot page this list).
    scope = f"stories:{build_id}:{state}:ranked"
    after = Cursor.read(env, cursor, scope)
    query = select(Story).where(Story.build_id == build_id, Story.state == state)
    key = (Story.rank, Story.name, Story.variant, Story.id)
    if after is not None:
        query = query.where(tuple_(*key) > tuple(after))
    rows = list(s.scalars(query.order_by(*key).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    last = rows[-1] if more else None
    return StoryList(
        items=story_records(env, s, rows),
        next_cursor=(
            Cursor.make(env, scope, [last.rank, last.name, last.variant, last.id]) if last else None
        ),
    )


def resolve_selector(
    s: Session,
    actor: Actor,
    *,
    build_id: str | None = None,
    commit_sha: str | None = None,
    pr_number: int | None = None,
    repo: str | None = None,
) -> Build:
    """The build named by exactly one of build_id, commit_sha (newest build of that commit) or
    pr_number (newest build of that PR; with ``repo`` when the number exists in several
    repositories). Raises InvalidInput, NotFound."""
    selectors.exactly_one({"build_id": build_id, "commit_sha": commit_sha, "pr_number": pr_number})
    if repo is not None and pr_number is None:
        raise InvalidInput("repo goes with pr_number: it says which repository's PR is meant")
    if build_id is not None:
        return _get_build(s, actor, build_id)
    query = select(Build).where(Build.project_id == actor.project_id)
    if commit_sha is not None:
        query = query.where(Build.commit_sha == check_sha(commit_sha))
        what = f"commit {commit_sha}"
    else:
        number = contexts.check_pr(pr_number)
        query = query.where(Build.pr_number == number)
        if repo is not None:
            query = query.where(Build.repo == contexts.check_repo(repo))
        else:
            _one_repo(s, actor, number)
        what = f"PR #{pr_number}" + (f" of {repo}" if repo else "")
    build = s.scalar(query.order_by(Build.id.desc()).limit(1))
    if build is None:
        raise NotFound(f"no build for {what} in this project")
    return build


def _one_repo(s: Session, actor: Actor, pr_number: int | None) -> None:
    """Refuse a PR number that several repositories' builds carry: the caller must say which."""
    repos = s.scalars(
        select(Build.repo)
        .where(Build.project_id == actor.project_id, Build.pr_number == pr_number)
        .distinct()
        .order_by(Build.repo)
        .limit(5)
    ).all()
    if len(repos) > 1:
        raise InvalidInput(
            f"PR #{pr_number} has builds in several repositories ({', '.join(map(str, repos))}): "
            "say which with repo (owner/name)"
        )


def confirm_selector(
    env: Env,
    actor: Actor,
    build_id_of: str | None,
    what: str,
    *,
    build_id: str | None = None,
    commit_sha: str | None = None,
    pr_number: int | None = None,
    repo: str | None = None,
) -> None:
    """Refuse a build selector sent beside an item that already names its build (a diff, a
    story) when the selector names another build: whoever sent it meant something by it.
    Raises InvalidInput."""
    if build_id is None and commit_sha is None and pr_number is None and repo is None:
        return
    with env.db.read() as s:
        build = s.get(Build, build_id_of) if build_id_of else None
        if build is not None and build.project_id != actor.project_id:
            build = None
        agrees = build is not None and (
            (build_id is None or build.id == build_id)
            and (commit_sha is None or build.commit_sha == check_sha(commit_sha))
            and (pr_number is None or build.pr_number == pr_number)
            and (repo is None or build.repo == repo)
        )
    if agrees:
        return
    given = ", ".join(
        f"{k} {v}"
        for k, v in (
            ("build_id", build_id),
            ("commit_sha", commit_sha),
            ("pr_number", pr_number),
            ("repo", repo),
        )
        if v is not None
    )
    owner = f"build {build.id}" if build is not None else "no build (a pushed screenshot)"
    raise InvalidInput(
        f"{what} belongs to {owner}, not to the build selected by {given}: leave the build "
        "selector out (the id already names one), or make it name that build"
    )


@short_read
def get_build(
    env: Env,
    actor: Actor,
    *,
    build_id: str | None = None,
    commit_sha: str | None = None,
    pr_number: int | None = None,
    repo: str | None = None,
    limit: int | None = None,
) -> BuildDetail:
    """A build's status, verdict and counts with the first page of each story list."""
    size = page_limit(limit)
    with env.db.read() as s:
        build = resolve_selector(
            s, actor, build_id=build_id, commit_sha=commit_sha, pr_number=pr_number, repo=repo
        )
        lists = {st: _story_page(env, s, build.id, st, None, size) for st in LISTED_STATES}
        return BuildDetail(**build_record(env, s, build).model_dump(), **lists)


@short_read
def list_build_stories(
    env: Env,
    actor: Actor,
    build_id: str,
    *,
    state: str = "changed",
    cursor: str | None = None,
    limit: int | None = None,
) -> StoryList:
    if state not in (*LISTED_STATES, "pending"):
        raise InvalidInput(f"state must be one of {', '.join(LISTED_STATES)}, pending")
    size = page_limit(limit)
    with env.db.read() as s:
        _get_build(s, actor, build_id)
        return _story_page(env, s, build_id, state, cursor, size)


BUILD_STATUSES = ("uploading", "comparing", "done", "expired")


@short_read
def list_builds(
    env: Env,
    actor: Actor,
    *,
    limit: int | None = None,
    cursor: str | None = None,
    branch: str | None = None,
    pr_number: int | None = None,
    status: str | None = None,
    verdict: str | None = None,
) -> Page[BuildRecord]:
    """Builds newest first, 20 by default, at most 100 a page; optionally only those of a
    branch, a PR number, a status or a verdict. Raises InvalidInput."""
    size = page_limit(limit, default=BUILDS_DEFAULT, maximum=BUILDS_MAX)
    if status is not None and status not in BUILD_STATUSES:
        raise InvalidInput(f"status must be one of {', '.join(BUILD_STATUSES)} (got {status!r})")
    if verdict is not None and verdict not in VERDICTS:
        raise InvalidInput(f"verdict must be one of {', '.join(VERDICTS)} (got {verdict!r})")
    pr_number = contexts.check_pr(pr_number)
    if branch is not None:
        branch = check_text("branch", branch, maximum=300, multiline=False)
    # The filters are part of the cursor's list: a cursor of one filtered list cannot page another.
    filters = (branch, pr_number, status, verdict)
    scope = "builds:" + ":".join(str(f) for f in filters) if any(filters) else "builds"
    after = Cursor.read(env, cursor, scope)
    params = {
        "project": actor.project_id,
        "branch": branch,
        "pr": pr_number,
        "status": status,
        "verdict": verdict,
        "after": after[0] if after is not None else None,
        "size": size + 1,
    }
    query = _builds_query(
        branch is not None,
        pr_number is not None,
        status is not None,
        verdict,
        after is not None,
    )
    with env.db.read() as s:
        rows, tallies = _paged_tallies(list(s.connection().execute(query, params)))
        more = len(rows) > size
        rows = rows[:size]
        return Page[BuildRecord](
            items=build_records(env, s, rows, tallies),
            next_cursor=Cursor.make(env, scope, [rows[-1].id]) if more else None,
        )


@short_read
def get_story(env: Env, actor: Actor, story_id: str) -> StoryRecord:
    with env.db.read() as s:
        story = scoping.owned(s, Story, story_id, actor, "story")
        return story_records(env, s, [story])[0]
