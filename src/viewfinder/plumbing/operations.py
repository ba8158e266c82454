"""A route's declaration of the service operation it carries out, for the front doors built on
FastAPI (the REST API and the dashboard's actions): the OpenAPI document shows the role it needs,
and the role test finds every route's operation there."""

from __future__ import annotations

from typing import Any

from viewfinder.services import permissions


def operation(name: str, openapi: dict[str, Any] | None = None) -> dict[str, Any]:
    """Keyword arguments for a route decorator (with the route's own ``openapi`` additions).
    Raises KeyError for an undeclared operation."""
    declared = permissions.needs(name)
    extra: dict[str, Any] = {**(openapi or {}), "x-operation": name}
    if declared.role is not None or declared.who is not None:
        extra["x-required-role"] = declared.who or declared.role
    return {"openapi_extra": extra}
