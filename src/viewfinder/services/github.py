"""GitHub: a project's token, and the commit status each build of a repository gets.

The status says what a pull request's checks need to know: ``pending`` while the build is
open or comparing, ``success`` when nothing awaits review (no change, or every change
accepted), ``failure`` when a change awaits review or was denied, or a comparison failed. It
links to the build. Statuses are posted by a job (commit_status.py queues it), with the
project's token, which is stored sealed and never returned.
"""

from __future__ import annotations

import logging
import re

import httpx
from pydantic import Field
from sqlalchemy.orm import Session

from viewfinder.errors import InvalidInput, NotFound
from viewfinder.jobs import registry
from viewfinder.services import permissions, signing
from viewfinder.services.builds.reading import build_record
from viewfinder.services.builds.records import BuildRecord
from viewfinder.services.commit_status import STATUS_JOB
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import Record
from viewfinder.services.text import check_text
from viewfinder.store.models import Build, Project

log = logging.getLogger("viewfinder.github")
SEAL = "github-token"
CONTEXT = "viewfinder"
TOKEN_PATTERN = r"^[!-~]{1,255}$"  # printable ASCII, no spaces
TIMEOUT = 10.0


class GithubRecord(Record):
    configured: bool = Field(description="The project has a GitHub token (it is never shown).")
    api_url: str = Field(description="Where statuses are posted (the server's setting).")


def _record(env: Env, project: Project) -> GithubRecord:
    return GithubRecord(configured=bool(project.github_token), api_url=env.settings.github_api_url)


def _project(s: Session, actor: Actor) -> Project:
    project = s.get(Project, actor.project_id)
    if project is None:
        raise NotFound("the project is gone")
    return project


def get_github(env: Env, actor: Actor) -> GithubRecord:
    permissions.require(actor, "get_github")
    with env.db.read() as s:
        return _record(env, _project(s, actor))


def set_github_token(env: Env, actor: Actor, token: object) -> GithubRecord:
    """Keep the token (a fine-grained token with commit statuses: read and write) for the
    project's builds of a repository. Raises InvalidInput, Forbidden."""
    permissions.require(actor, "set_github")
    text = check_text("token", token, maximum=255, multiline=False)
    if not re.fullmatch(TOKEN_PATTERN, text):
        raise InvalidInput(
            "token has spaces or characters outside ASCII, which GitHub tokens never have: "
            "paste the token alone"
        )
    with env.db.write() as s:
        project = _project(s, actor)
        project.github_token = signing.seal(env.signer, SEAL, text)
        return _record(env, project)


def clear_github_token(env: Env, actor: Actor) -> GithubRecord:
    permissions.require(actor, "set_github")
    with env.db.write() as s:
        project = _project(s, actor)
        project.github_token = None
        return _record(env, project)


# ---- the status of a build ------------------------------------------------------------------


def status_of(record: BuildRecord) -> tuple[str, str]:
    """The build's status (pending, success or failure) and its one-line description."""
    counts = record.counts
    if record.status in ("uploading", "comparing"):
        left = counts.pending
        return "pending", f"comparing {left} screenshot(s)" if left else "uploading screenshots"
    if record.status == "expired":
        return "failure", "the build was never finalized"
    if counts.failed:
        return "failure", f"{counts.failed} comparison(s) failed"
    # Removed screenshots are reported, not reviewed: only changes wait for a decision.
    awaiting = counts.changed
    if record.review == "denied":
        return "failure", "a change was denied"
    if awaiting and record.review != "accepted":
        return "failure", f"{awaiting} change(s) await review"
    if awaiting:
        return "success", f"{awaiting} change(s) accepted"
    extra = [f"{n} {what}" for n, what in ((counts.new, "new"), (counts.removed, "removed")) if n]
    return "success", ", ".join(["no visual changes", *extra])


class GithubRefused(Exception):
    """GitHub refused the status for good (a bad token, an unknown repository)."""


def post_status(env: Env, build_id: str, _job_id: int) -> bool:
    """The github_status job: post the build's current status. Network failures and GitHub's
    5xx are retried by the queue; a refusal (401, 403, 404, 422) is final."""
    with env.db.read() as s:
        build = s.get(Build, build_id)
        project = s.get(Project, build.project_id) if build is not None else None
        if build is None or project is None or not project.github_token or not build.repo:
            return False
        record = build_record(env, s, build)
        state, description = status_of(record)
        url = record.url
        sha, repo, sealed = build.commit_sha, build.repo, project.github_token
    token = signing.unseal(env.signer, SEAL, sealed)
    if token is None:
        raise GithubRefused(
            f"project {project.id}: the GitHub token cannot be read with this server's secret "
            "(VIEWFINDER_SECRET changed): set it again"
        )
    response = httpx.post(
        f"{env.settings.github_api_url.rstrip('/')}/repos/{repo}/statuses/{sha}",
        json={"state": state, "target_url": url, "description": description, "context": CONTEXT},
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
        },
        timeout=TIMEOUT,
        follow_redirects=False,
    )
    if response.status_code in (401, 403, 404, 422):
        raise GithubRefused(
            f"GitHub refused the status of {repo}@{sha} ({response.status_code}): "
            f"{response.text[:200]}"
        )
    response.raise_for_status()
    return False


def _give_up(_env: Env, build_id: str, reason: str) -> None:
    log.warning("no commit status for build %s: %s", build_id, reason)


registry.register(
    registry.Kind(
        STATUS_JOB, run=post_status, give_up=_give_up, time_limit=30.0, final=(GithubRefused,)
    )
)
