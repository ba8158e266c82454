"""Deployments: static builds uploaded as zips, running previews and container images that
recorded sessions are replayed on."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import Field

from viewfinder.api.deps import ActorDep, EnvDep, op, raw_body, read_limited
from viewfinder.api.fields import SHA, CommitSha
from viewfinder.errors import InvalidInput, TooLarge
from viewfinder.plumbing.bodies import Body, JsonInt
from viewfinder.plumbing.offloop import call
from viewfinder.services import deployments
from viewfinder.services.deployments import (
    ContainerTicket,
    DeploymentRecord,
    UploadRecord,
    UploadTicket,
)

router = APIRouter(tags=["deployments"])
public = APIRouter(tags=["deployments"])


@router.post("/deployments/uploads", status_code=201, **op("request_asset_upload"))
async def request_asset_upload(env: EnvDep, actor: ActorDep) -> UploadTicket:
    """An upload id and a signed URL to PUT a zipped static build to."""
    return await call(deployments.request_asset_upload, env, actor)


async def _read_zip(request: Request, limit: int) -> bytes:
    def refuse(declared: int | None) -> TooLarge:
        size = f"is {declared:,} bytes" if declared is not None else f"is over {limit:,} bytes"
        return TooLarge(f"the zip {size}; at most {limit:,} are accepted")

    data = await read_limited(request, limit, refuse)
    if not data:
        raise InvalidInput("the request body is empty: PUT the zip of the build as the body")
    return data


@public.put(
    "/api/v1/deployments/uploads/{token}",
    **op("receive_upload", raw_body("application/zip", "application/octet-stream")),
)
async def receive_upload(token: str, request: Request, env: EnvDep) -> UploadRecord:
    """The zip of a static build, PUT to the signed URL request_asset_upload gave (no key)."""
    data = await _read_zip(request, env.settings.deploy_max_zip_bytes)
    return await call(deployments.receive_upload, env, token, data)


class Rule(Body):
    source: str = Field(
        description="A path pattern; * matches anything.",
        json_schema_extra={"maxLength": 500, "pattern": "^/"},
    )
    destination: str = Field(
        description="The build's file that answers it.",
        json_schema_extra={"maxLength": 500, "pattern": "^/"},
    )


class AssetBuild(Body):
    upload_id: str = Field(max_length=40)
    commit_sha: CommitSha
    rewrites: list[Rule] = Field(
        default_factory=list,
        max_length=100,
        description="Tried before the single-page-app fallback (paths without a dot answer "
        "/index.html).",
    )


@router.post("/deployments", status_code=201, **op("register_asset_build"))
async def register_asset_build(body: AssetBuild, env: EnvDep, actor: ActorDep) -> DeploymentRecord:
    """Make an uploaded zip a deployment of a commit (the zip is checked here)."""
    rules = [r.model_dump() for r in body.rewrites]
    return await call(
        deployments.register_asset_build, env, actor, body.upload_id, body.commit_sha, rules
    )


class Preview(Body):
    url: str = Field(max_length=2000, description="The running preview's http(s) address.")
    commit_sha: CommitSha


@router.post("/deployments/previews", status_code=201, **op("register_preview"))
async def register_preview(body: Preview, env: EnvDep, actor: ActorDep) -> DeploymentRecord:
    """A preview already running at a URL as a deployment (the capture address rules apply)."""
    return await call(deployments.register_preview, env, actor, body.url, body.commit_sha)


@router.post("/deployments/containers/uploads", status_code=201, **op("request_container_upload"))
async def request_container_upload(env: EnvDep, actor: ActorDep) -> ContainerTicket:
    """Where to put a container image (needs a container runtime on the server)."""
    return await call(deployments.request_container_upload, env, actor)


class ContainerBuild(Body):
    upload_id: str = Field(max_length=40)
    commit_sha: CommitSha
    container_port: JsonInt = Field(3000, json_schema_extra={"minimum": 1, "maximum": 65535})
    container_env: dict[str, str] = Field(default_factory=dict)
    health_check: str = Field("/", json_schema_extra={"maxLength": 500, "pattern": "^/"})


@router.post("/deployments/containers", status_code=201, **op("register_container_build"))
async def register_container_build(
    body: ContainerBuild, env: EnvDep, actor: ActorDep
) -> DeploymentRecord:
    """A tagged container image as a deployment."""
    return await call(
        deployments.register_container_build,
        env,
        actor,
        body.upload_id,
        body.commit_sha,
        container_port=body.container_port,
        container_env=body.container_env,
        health_check=body.health_check,
    )


@router.get("/deployments", **op("list_deployments"))
async def list_deployments(
    env: EnvDep,
    actor: ActorDep,
    commit_sha: Annotated[str | None, Query(json_schema_extra=SHA)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> list[DeploymentRecord]:
    """Deployments, newest first."""
    return await call(deployments.list_deployments, env, actor, commit_sha=commit_sha, limit=limit)


@router.get("/deployments/{deployment_id}", **op("get_deployment"))
async def get_deployment(deployment_id: str, env: EnvDep, actor: ActorDep) -> DeploymentRecord:
    return await call(deployments.get_deployment, env, actor, deployment_id)
