"""The caller's project: identity, keys, usage; and the unauthenticated file links."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from pydantic import ConfigDict, Field

from viewfinder.api.deps import ActorDep, EnvDep, op
from viewfinder.api.fields import KeyKind, KeyLabel, Roles
from viewfinder.plumbing.bodies import Body, JsonInt
from viewfinder.plumbing.offloop import call
from viewfinder.services import images, projects, urls
from viewfinder.services.images import UsageRecord
from viewfinder.services.projects import KeyRecord, NewKey, ProjectRecord

router = APIRouter(tags=["project"])
public = APIRouter(tags=["files"])


@router.get("/project", **op("whoami"))
async def whoami(env: EnvDep, actor: ActorDep) -> ProjectRecord:
    return await call(projects.whoami, env, actor)


class ProjectSettings(Body):
    model_config = ConfigDict(extra="forbid")

    ignore_noise: bool | None = Field(
        None,
        description="Pairs whose every difference is rendering noise are not changed "
        "(default true). Applies to comparisons made from now on.",
    )


@router.patch("/project", **op("update_project"))
async def update_project(body: ProjectSettings, env: EnvDep, actor: ActorDep) -> ProjectRecord:
    """Change the project's settings (admin role); settings left out stay as they are."""
    return await call(projects.update_project, env, actor, ignore_noise=body.ignore_noise)


class KeyRequest(Body):
    roles: Roles
    label: KeyLabel = ""
    kind: KeyKind = "person"


@router.post("/keys", status_code=201, **op("create_key"))
async def create_key(body: KeyRequest, env: EnvDep, actor: ActorDep) -> NewKey:
    """A new key for this project (admin role). The key is in the response, once."""
    return await call(
        projects.create_key, env, actor, roles=body.roles, label=body.label, kind=body.kind
    )


@router.get("/keys", **op("list_keys"))
async def list_keys(env: EnvDep, actor: ActorDep) -> list[KeyRecord]:
    return await call(projects.list_keys, env, actor)


@router.post("/keys/{key_id}/revoke", **op("revoke_key"))
async def revoke_key(key_id: str, env: EnvDep, actor: ActorDep) -> KeyRecord:
    return await call(projects.revoke_key, env, actor, key_id)


@router.get("/usage", **op("usage"))
async def usage(env: EnvDep, actor: ActorDep) -> UsageRecord:
    return await call(images.usage, env, actor)


class QuotaBody(Body):
    quota_bytes: JsonInt | None = Field(
        description="Bytes the project may keep; null for no limit.",
        json_schema_extra={"minimum": 0, "maximum": 2**62 - 1},
    )


@router.put("/usage/quota", **op("set_quota"))
async def set_quota(body: QuotaBody, env: EnvDep, actor: ActorDep) -> UsageRecord:
    return await call(images.set_quota, env, actor, body.quota_bytes)


IMAGE: dict[int | str, dict[str, Any]] = {
    200: {"content": {"image/png": {}}, "description": "The image."}
}


@public.get("/api/v1/files/{token}", responses=IMAGE, response_class=Response, **op("open_file"))
async def signed_file(token: str, env: EnvDep) -> Response:
    """A stored image behind a signed, expiring link (no key needed)."""
    data = await call(urls.open_file, env, token)
    return Response(data, media_type="image/png", headers={"Cache-Control": "private, max-age=300"})


@public.get("/v/{token}", responses=IMAGE, response_class=Response, **op("delivered_image"))
async def delivered(token: str, env: EnvDep) -> Response:
    """A pushed image's delivery link, as pasted into PRs: it works until the image expires."""
    data, media = await call(images.delivered_image, env, token)
    return Response(data, media_type=media, headers={"Cache-Control": "public, max-age=60"})
