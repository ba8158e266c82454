"""The OpenAPI document, made to tell the truth: every operation lists the statuses it can
answer with, each in the one error shape; FastAPI's own 422 (which this API never answers:
bad input is a 400) is gone. What an operation can answer follows from its declaration
(services/permissions.py) and what it does."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from viewfinder.plumbing.errorshape import ErrorResponse
from viewfinder.services import permissions

# Operations that store bytes: over the project's quota (402), or over a size limit (413).
STORING = {"add_stories", "push", "compare_images", "receive_upload", "register_asset_build"}
# Operations that refuse a body over a size limit (413) without storing it against the quota.
SIZED = {"ingest_session"}
# Operations that touch nothing that can be down: every other one needs the database at least
# (503 while it cannot be reached, plumbing/outages.py).
SELF_CONTAINED = {"health"}
REASONS = {
    400: "The request cannot be carried out as given; the message says what to change.",
    401: "No key or token, or an unknown, revoked or expired one (or a token for another "
    "resource).",
    402: "The project's storage quota is used up.",
    403: "The key or person lacks the role this operation needs (x-required-role), or the "
    "operation is a person's or an owner's (x-required-role person or owner) and a key called.",
    404: "Nothing of that id in the key's project (or a link that names nothing).",
    409: "The state changed, or forbids this now; the message says what to do.",
    413: "The upload is over a size limit.",
    503: "Something the operation needs is down for the moment (the database; for some "
    "operations the container runtime); try again after Retry-After seconds.",
    500: "A failure nobody expected; the message carries a request id for the server log.",
}


def statuses(operation: str, method: str) -> list[int]:
    declared = permissions.needs(operation)
    found = [400, 404, 500]
    if not declared.public:
        found.append(401)
    if declared.role is not None or declared.who is not None:
        found.append(403)
    if method != "get":
        found.append(409)
    if operation in STORING:
        found += [402, 413]
    if operation in SIZED:
        found.append(413)
    if operation not in SELF_CONTAINED:
        found.append(503)
    return sorted(found)


def install(app: FastAPI) -> None:
    def document() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            components.pop(name, None)
        components["ErrorResponse"] = ErrorResponse.model_json_schema(
            ref_template="#/components/schemas/{model}"
        )
        for defs in components["ErrorResponse"].pop("$defs", {}).items():
            components[defs[0]] = defs[1]
        for methods in schema.get("paths", {}).values():
            for method, spec in methods.items():
                responses = spec.setdefault("responses", {})
                responses.pop("422", None)
                operation = spec.get("x-operation")
                if operation is None:
                    continue
                for status in statuses(operation, method):
                    responses.setdefault(
                        str(status),
                        {
                            "description": REASONS[status],
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/ErrorResponse"}
                                }
                            },
                        },
                    )
        app.openapi_schema = schema
        return schema

    app.openapi = document  # type: ignore[method-assign]
