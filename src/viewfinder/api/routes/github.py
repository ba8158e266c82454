"""The project's GitHub token, for commit statuses on its builds of a repository."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import Field

from viewfinder.api.deps import ActorDep, EnvDep, op
from viewfinder.plumbing.bodies import Body
from viewfinder.plumbing.offloop import call
from viewfinder.services import github
from viewfinder.services.github import GithubRecord

router = APIRouter(tags=["github"])


@router.get("/project/github", **op("get_github"))
async def get_github(env: EnvDep, actor: ActorDep) -> GithubRecord:
    """Whether the project has a GitHub token (the token itself is never returned)."""
    return await call(github.get_github, env, actor)


class TokenBody(Body):
    token: str = Field(
        description="A GitHub token allowed to write commit statuses of the project's "
        "repositories (a fine-grained token with Commit statuses: read and write).",
        json_schema_extra={"pattern": github.TOKEN_PATTERN},
    )


@router.put("/project/github", **op("set_github"))
async def set_github(body: TokenBody, env: EnvDep, actor: ActorDep) -> GithubRecord:
    """Keep the token, sealed with the server's secret: from now on every build of a
    repository gets a commit status (pending, then success or failure, linking to the build)."""
    return await call(github.set_github_token, env, actor, body.token)


@router.delete("/project/github", **op("set_github"))
async def clear_github(env: EnvDep, actor: ActorDep) -> GithubRecord:
    """Forget the token: no more commit statuses."""
    return await call(github.clear_github_token, env, actor)
