"""When a build's commit status on GitHub must be brought up to date: the build is finalized,
its last comparison finishes, or a decision on one of its stories is made. Only builds of a
repository, in projects with a GitHub token, get a status. The job that posts it is in
github.py; this module is what the build and review services call, in their transaction, so
the job exists exactly when the change does."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from viewfinder.jobs import queue as jobs
from viewfinder.store.models import Build, Comparison, Job, Project, Story

STATUS_JOB = "github_status"


def build_changed(s: Session, build: Build) -> None:
    if not build.repo:
        return
    token = s.scalar(select(Project.github_token).where(Project.id == build.project_id))
    if not token:
        return
    # One waiting job posts whatever the build's state is when it runs: accepting a whole
    # build queues one, not one per story.
    for pending in s.new:
        if isinstance(pending, Job) and (pending.kind, pending.subject_id) == (
            STATUS_JOB,
            build.id,
        ):
            return
    waiting = select(Job.id).where(
        Job.kind == STATUS_JOB, Job.subject_id == build.id, Job.state == "pending"
    )
    if s.scalar(waiting.limit(1)) is None:
        jobs.enqueue(s, STATUS_JOB, build.id)


def decided(s: Session, row: Comparison) -> None:
    """A decision on a diff: the build of its story, if it is one, may now pass or fail."""
    if row.owner_kind != "story":
        return
    story = s.get(Story, row.owner_id)
    build = s.get(Build, story.build_id) if story is not None else None
    if build is not None and build.status == "done":
        build_changed(s, build)
