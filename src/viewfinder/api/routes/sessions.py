"""Recorded sessions: the recorder script, the ingest its batches go to (answering pages of
other origins, CORS), the session list, a session's user flow and its whole recording; the
project's allowed origins."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import Field

from viewfinder.api.deps import ActorDep, EnvDep, bearer, op, raw_body, read_limited
from viewfinder.errors import TooLarge, ViewfinderError
from viewfinder.plumbing.bodies import Body
from viewfinder.plumbing.errorshape import error_of
from viewfinder.plumbing.offloop import call
from viewfinder.plumbing.operations import operation
from viewfinder.replay.recorder import recorder_script
from viewfinder.services import permissions, projects, sessions
from viewfinder.services.sessions import IngestResult, SessionData, SessionList

router = APIRouter(tags=["sessions"])
public = APIRouter(tags=["sessions"])

INGEST = "/sessions/ingest"
KeyQuery = Annotated[
    str | None,
    Query(
        description="The record key, for pages that cannot send headers (sendBeacon); "
        "or send it as Authorization: Bearer.",
        max_length=200,
    ),
]


def _cors(request: Request) -> dict[str, str]:
    # The page's origin is echoed so it can read the answer; whether it may send sessions at
    # all is the project's list, checked by the ingest itself (a refused page stores nothing).
    origin = request.headers.get("origin")
    if not origin:
        return {}
    return {
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Allow-Methods": "POST, OPTIONS",
        "Access-Control-Allow-Headers": "Content-Type, Authorization",
        "Access-Control-Max-Age": "600",
        "Vary": "Origin",
    }


@router.options(INGEST, status_code=204, **operation("ingest_preflight"))
async def ingest_preflight(request: Request) -> Response:
    """The browser's CORS preflight for the ingest (recorder.js avoids it with text/plain)."""
    return Response(status_code=204, headers=_cors(request))


async def _read_batch(request: Request, limit: int) -> bytes:
    def refuse(_: int | None) -> TooLarge:
        return TooLarge(
            f"the batch is over {limit:,} bytes; at most {limit:,} are accepted in one "
            "batch (VIEWFINDER_RECORD_MAX_BATCH_BYTES)",
            limit=limit,
        )

    return await read_limited(request, limit, refuse)


@router.post(
    INGEST,
    responses={200: {"model": IngestResult}},
    response_model=None,
    **operation("ingest_session", raw_body("text/plain", "application/json")),
)
async def ingest(request: Request, env: EnvDep, key: KeyQuery = None) -> Response:
    """One batch of a recorded session, as recorder.js sends it (a JSON object, sent as
    text/plain). Needs a key of the record role; pages of origins the project does not allow
    are refused."""
    headers = _cors(request)
    try:
        secret = key or bearer(request)
        actor = projects.known_actor(env, secret, recording=True)
        if actor is None:
            actor = await call(projects.authenticate, env, secret, recording=True)
        permissions.require(actor, "ingest_session")
        raw = await _read_batch(request, env.settings.record_max_batch_bytes)
        result = await call(sessions.ingest, env, actor, raw, origin=request.headers.get("origin"))
    except ViewfinderError as exc:
        return error_of(exc, headers)
    return JSONResponse(result.model_dump(mode="json"), headers=headers)


@router.get("/sessions", **op("list_sessions"))
async def list_sessions(
    env: EnvDep,
    actor: ActorDep,
    created_since: datetime | None = None,
    created_until: datetime | None = None,
    recorded_since: datetime | None = None,
    recorded_until: datetime | None = None,
    recorded_by: Annotated[str | None, Query(max_length=200)] = None,
    exclude_synthetic: bool = False,
    visited_url_filter: Annotated[
        str | None,
        Query(description="A URL glob; * matches anything.", min_length=1, max_length=1000),
    ] = None,
    include: Annotated[
        list[str] | None,
        Query(
            description="Optional columns: " + ", ".join(sessions.INCLUDES) + ".",
            json_schema_extra={"items": {"enum": list(sessions.INCLUDES)}},
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
) -> SessionList:
    """Recorded sessions, newest first."""
    return await call(
        sessions.list_sessions,
        env,
        actor,
        created_since=created_since,
        created_until=created_until,
        recorded_since=recorded_since,
        recorded_until=recorded_until,
        recorded_by=recorded_by,
        exclude_synthetic=exclude_synthetic,
        visited_url_filter=visited_url_filter,
        include=set(include or ()),
        limit=limit,
        offset=offset,
    )


@router.get("/sessions/{session_id}", **op("get_session"))
async def get_session(session_id: str, env: EnvDep, actor: ActorDep) -> SessionData:
    """A session's user flow and network summary."""
    return await call(sessions.get_session_data, env, actor, session_id)


@router.delete("/sessions/{session_id}", status_code=204, **op("delete_session"))
async def delete_session(session_id: str, env: EnvDep, actor: ActorDep) -> Response:
    """Forget a recorded session and all it sent (admin role)."""
    await call(sessions.delete_session, env, actor, session_id)
    return Response(status_code=204)


@router.get("/sessions/{session_id}/recording", **op("get_session"))
async def get_recording(session_id: str, env: EnvDep, actor: ActorDep) -> dict[str, Any]:
    """The session's whole recording (the recording format, version 1)."""
    recording = await call(sessions.get_recording, env, actor, session_id)
    return recording.to_json()


class Origins(Body):
    origins: (
        list[Annotated[str, Field(max_length=sessions.ORIGIN_MAX, pattern=sessions.ORIGIN_PATTERN)]]
        | None
    ) = Field(
        description="Origins (scheme://host[:port]) whose pages may send sessions; null: any.",
        max_length=sessions.MAX_ORIGINS,
    )


@router.get("/project/record-origins", **op("whoami"))
async def get_record_origins(env: EnvDep, actor: ActorDep) -> Origins:
    return Origins(origins=await call(sessions.get_record_origins, env, actor))


@router.put("/project/record-origins", **op("update_project"))
async def set_record_origins(body: Origins, env: EnvDep, actor: ActorDep) -> Origins:
    """Which pages may send recorded sessions (admin role)."""
    return Origins(origins=await call(sessions.set_record_origins, env, actor, body.origins))


@public.get("/recorder.js", response_class=Response, **op("recorder_script"))
async def recorder(env: EnvDep) -> Response:
    """The session recorder to embed: <script src=".../recorder.js" data-key="vf_proj_...">
    with a key of the record role."""
    return Response(
        recorder_script(env.settings.record_sample_rate),
        media_type="application/javascript; charset=utf-8",
        headers={
            "Cache-Control": "public, max-age=300",
            "Cross-Origin-Resource-Policy": "cross-origin",
        },
    )
