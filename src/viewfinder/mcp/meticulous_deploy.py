"""The Meticulous profile's session and deployment tools: Meticulous's arguments and result
fields over the recorder's services (services/sessions, services/deployments)."""

from __future__ import annotations

import importlib
from datetime import datetime
from typing import Any

from viewfinder.errors import InvalidInput, Unavailable
from viewfinder.mcp.meticulous_args import (
    Out,
    ProjectArg,
    RegisterAssets,
    RegisterContainer,
    SessionArg,
    SessionsArgs,
    shaped,
)
from viewfinder.mcp.tooling import Call
from viewfinder.services import deployments


def service() -> Any:
    try:
        return importlib.import_module("viewfinder.services.sessions")
    except ImportError:
        raise Unavailable("this server keeps no recorded sessions yet") from None


def get_sessions(call: Call, a: SessionsArgs) -> Out:
    def when(value: str | None, name: str) -> datetime | None:
        if value is None:
            return None
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInput(
                f"{name} must be an ISO-8601 time, e.g. 2026-01-31T12:00:00Z"
            ) from None

    include = {
        column
        for column, wanted in (
            ("start_url", a.includeStartUrl),
            ("abandoned_reason", a.includeAbandonedReason),
            ("number_user_events", a.includeNumberUserEvents),
            ("number_urls_visited", a.includeNumberUrlsVisited),
            ("duration_seconds", a.includeDurationSeconds),
        )
        if wanted
    }
    found = service().list_sessions(
        call.env,
        call.actor,
        created_since=when(a.createdSince, "createdSince"),
        created_until=when(a.createdUntil, "createdUntil"),
        recorded_since=when(a.recordedSince, "recordedSince"),
        recorded_until=when(a.recordedUntil, "recordedUntil"),
        recorded_by=a.recordedBy,
        exclude_synthetic=a.excludeSyntheticSessions,
        visited_url_filter=a.visitedUrlFilter,
        include=include,
        limit=a.limit,
        offset=a.offset,
    )
    rows = []
    for session in found.sessions:
        row = {
            "id": session.id,
            "createdAt": session.created_at.isoformat(),
            "recordedAt": session.recorded_at.isoformat(),
            "recordedBy": session.recorded_by,
            "status": session.status,
        }
        for column, name in (
            ("start_url", "startUrl"),
            ("abandoned_reason", "abandonedReason"),
            ("number_user_events", "numberUserEvents"),
            ("number_urls_visited", "numberUrlsVisited"),
            ("duration_seconds", "durationSeconds"),
        ):
            if column in include:
                row[name] = getattr(session, column)
        rows.append(row)
    return shaped({"project": found.project, "sessions": rows})


def session_data(call: Call, a: SessionArg) -> Out:
    data = service().get_session_data(call.env, call.actor, a.sessionId)
    return shaped(
        {
            "sessionId": data.id,
            "status": data.status,
            "startUrl": data.start_url,
            "userFlow": data.user_flow,
            "networkSummary": data.network,
            "urls": data.urls,
            "durationSeconds": data.duration_seconds,
        }
    )


def upload(call: Call, a: ProjectArg) -> Out:
    ticket = deployments.request_asset_upload(call.env, call.actor)
    return shaped(
        {
            "uploadId": ticket.upload_id,
            "uploadUrl": ticket.upload_url,
            "method": ticket.method,
            "expiresAt": ticket.expires_at.isoformat(),
            "maxBytes": ticket.max_bytes,
        }
    )


def register_assets(call: Call, a: RegisterAssets) -> Out:
    made = deployments.register_asset_build(
        call.env, call.actor, a.uploadId, a.commitSha, a.rewrites
    )
    return shaped({"deploymentId": made.id, "commitSha": made.commit_sha})


def container_upload(call: Call, a: ProjectArg) -> Out:
    ticket = deployments.request_container_upload(call.env, call.actor)
    return shaped(
        {
            "uploadId": ticket.upload_id,
            "image": ticket.image,
            "runtime": ticket.runtime,
            "instructions": ticket.instructions,
            "expiresAt": ticket.expires_at.isoformat(),
        }
    )


def register_container(call: Call, a: RegisterContainer) -> Out:
    made = deployments.register_container_build(
        call.env,
        call.actor,
        a.uploadId,
        a.commitSha,
        container_port=a.containerPort,
        container_env=a.containerEnv,
        health_check=a.containerHealthCheckEndpoint,
    )
    return shaped({"deploymentId": made.id, "commitSha": made.commit_sha})
