"""Every write is guarded by the role its operation declares (services/permissions.py): each
REST route, each tool of each MCP profile and each dashboard action is called with a key of each
role, and a key without the role gets 403 naming the role to ask for, while one with it gets
past the check. A route or tool that names no declared operation fails here."""

from __future__ import annotations

import base64
from typing import Any

import anyio
import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from tests.conftest import shot
from tests.mcp_clients import BASE, connect, serving, texts
from tests.web_client import sign_in
from viewfinder.app import create_app
from viewfinder.mcp.http import path_of
from viewfinder.mcp.server import profiles
from viewfinder.services import oauth, people, permissions, projects, teams
from viewfinder.services.env import IMPLIED, ROLES, Env
from viewfinder.web import actions

PNG = shot()
DATA_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()


@pytest.fixture
def role_keys(env: Env) -> dict[str, str]:
    """The first project's keys of one role each."""
    assert projects.bootstrap(env) is not None
    return {
        role: projects.create_key(env, None, roles=[role], label=role, kind="ci").key
        for role in ROLES
    }


def allowed(role: str, operation: str) -> bool:
    needed = permissions.needs(operation).role
    return needed is None or needed in IMPLIED[role]


def dummy(schema: dict[str, Any], defs: dict[str, Any], name: str = "") -> Any:
    """The smallest value a JSON schema accepts: what a call needs to reach the service."""
    if "$ref" in schema:
        return dummy(defs[schema["$ref"].rsplit("/", 1)[1]], defs, name)
    for union in ("anyOf", "oneOf"):
        if union in schema:
            options = [s for s in schema[union] if s.get("type") != "null"]
            return dummy(options[0], defs, name) if options else None
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        required = schema.get("required", [])
        props = schema.get("properties", {})
        return {k: dummy(props[k], defs, k) for k in required}
    if kind == "array":
        return [dummy(schema["items"], defs, name)] * schema.get("minItems", 0)
    if kind == "integer":
        return max(1, schema.get("minimum", 1))
    if kind == "number":
        return 0.0
    if kind == "boolean":
        return False
    if name in ("image", "file"):
        return DATA_URL
    if name == "commit_sha":
        return "abcd1234"
    return "x1"


def check(
    role: str, operation: str, status: int, code: str, message: str, *, key: bool = True
) -> None:
    where = f"{operation} as {role}"
    assert status != 500, f"{where}: {message}"
    needed = permissions.needs(operation).role
    who = permissions.needs(operation).who
    if key and who is not None:
        # Only a person (or an owner) may: every key is refused, saying so.
        assert (status, code) == (403, "forbidden"), f"{where} got {status} {code}: {message}"
        assert "a project key" in message, f"{where}: {message}"
        return
    if allowed(role, operation):
        assert status != 403 or code != "forbidden", f"{where} was refused: {message}"
    else:
        assert (status, code) == (403, "forbidden"), f"{where} got {status} {code}: {message}"
        assert f"'{needed}' role" in message, f"{where}: {message}"


def test_every_rest_route_declares_its_operation_and_enforces_its_role(
    env: Env, role_keys: dict[str, str]
) -> None:
    app = create_app(env=env, workers=0)
    document = app.openapi()
    defs = document["components"]["schemas"]
    called = 0
    with TestClient(app) as client:
        for path, methods in document["paths"].items():
            for method, spec in methods.items():
                operation = spec.get("x-operation")
                assert operation in permissions.OPERATIONS, f"{method} {path} names no operation"
                url = path.replace("{pr_number}", "3")
                for param in spec.get("parameters", []):
                    if param["in"] == "path":
                        url = url.replace("{" + param["name"] + "}", "x1")
                query = {
                    p["name"]: dummy(p["schema"], defs, p["name"])
                    for p in spec.get("parameters", [])
                    if p["in"] == "query" and p.get("required")
                }
                body: dict[str, Any] = {}
                content = spec.get("requestBody", {}).get("content", {})
                if "application/json" in content:
                    body["json"] = dummy(content["application/json"]["schema"], defs)
                elif "multipart/form-data" in content:
                    body["files"] = [("file", ("home", PNG, "image/png"))]
                elif content:
                    body["content"] = PNG
                if permissions.needs(operation).public:
                    answer = client.request(method, url, params=query, **body)
                    assert answer.status_code not in (401, 403, 500), f"{path}: {answer.text}"
                    continue
                for role, key in role_keys.items():
                    answer = client.request(
                        method,
                        url,
                        params=query,
                        headers={"Authorization": f"Bearer {key}"},
                        **body,
                    )
                    error = answer.json().get("error", {}) if answer.content[:1] == b"{" else {}
                    check(
                        role,
                        operation,
                        answer.status_code,
                        str(error.get("code", "")),
                        str(error.get("message", answer.text[:200])),
                    )
                    if answer.status_code == 403:
                        declared = permissions.needs(operation)
                        assert error["details"]["role"] == (declared.who or declared.role)
                called += 1
    assert called >= 40


def test_every_mcp_tool_of_every_profile_declares_its_operation_and_enforces_its_role(
    env: Env, role_keys: dict[str, str]
) -> None:
    async def walk() -> int:
        called = 0
        async with serving(env) as app:
            for profile, specs in profiles().items():
                for role, key in role_keys.items():
                    url = f"{BASE}{path_of(profile)}"
                    async with connect(url, key=key, app=app) as client:
                        listed = {t.name: t for t in (await client.list_tools()).tools}
                        for spec in specs:
                            assert spec.operation in permissions.OPERATIONS, spec.name
                            schema = listed[spec.name].input_schema
                            args = dummy(schema, schema.get("$defs", {}))
                            result = await client.call_tool(spec.name, args)
                            text = texts(result)[0] if result.content else ""
                            code = text[1 : text.index("]")] if text.startswith("[") else ""
                            status = 403 if code == "forbidden" else 200
                            check(role, spec.operation, status, code, text)
                            called += 1
        return called

    assert anyio.run(walk) == sum(len(s) for s in profiles().values()) * len(ROLES)


def test_every_dashboard_action_declares_its_operation_and_enforces_its_role(
    env: Env, role_keys: dict[str, str]
) -> None:
    routes = [r for r in actions.router.routes if isinstance(r, APIRoute)]
    assert len(routes) >= 10
    for role, key in role_keys.items():
        with TestClient(create_app(env=env, workers=0), base_url="http://dash.test") as client:
            csrf = sign_in(client, key)
            for route in routes:
                operation = (route.openapi_extra or {}).get("x-operation")
                assert operation in permissions.OPERATIONS, f"{route.path} names no operation"
                body = route.body_field
                payload = None
                if body is not None:
                    schema = body.field_info.annotation.model_json_schema()  # type: ignore[union-attr]
                    payload = dummy(schema, schema.get("$defs", {}))
                url = route.path
                for name in ("diff_id", "build_id", "comment_id", "baseline_id"):
                    url = url.replace("{" + name + "}", "x1")
                (method,) = route.methods
                answer = client.request(method, url, json=payload, headers={"x-csrf-token": csrf})
                error = answer.json().get("error", {})
                check(
                    role,
                    operation,
                    answer.status_code,
                    error.get("code", ""),
                    error.get("message", ""),
                )


PASSWORD = "correct horse battery"


@pytest.fixture
def role_people(env: Env) -> dict[str, str]:
    """A person of each role in the first project: role -> their person id."""
    boot = projects.bootstrap(env)
    assert boot is not None
    made = {}
    for role in ROLES:
        person = people.create_person(env, f"{role}@example.com", role.title(), PASSWORD)
        teams.add_member_locally(env, "default", person.email, [role])
        made[role] = person.id
    return made


def token_for(env: Env, person_id: str, resource: str, roles: list[str]) -> str:
    """An access token as the consent page and /token would make it."""
    client_id = f"client-{person_id}-{resource.rsplit('/', 1)[-1]}"  # one per person and endpoint
    oauth.register_client(env, client_id, {"client_name": "t"})
    request = oauth.ConsentRequest(
        client_id=client_id,
        client_name="t",
        redirect_uri="http://127.0.0.1:9/cb",
        redirect_uri_explicit=True,
        code_challenge="x",
        state=None,
        scopes=[],
        resource=resource,
    )
    project_id = people.person_actor(env, person_id, _default(env)).project_id
    code = oauth.allow(env, request, person_id, project_id, roles)
    grant = oauth.load_code(env, code)
    assert grant is not None
    return oauth.exchange_code(env, grant).access_token


def _default(env: Env) -> str:
    return teams.all_projects(env)[0].id


def test_every_mcp_tool_enforces_the_role_a_person_allowed_their_agent(
    env: Env, role_people: dict[str, str]
) -> None:
    async def walk() -> int:
        called = 0
        async with serving(env) as app:
            for profile, specs in profiles().items():
                url = f"{BASE}{path_of(profile)}"
                for role, person_id in role_people.items():
                    token = token_for(env, person_id, url, [role])
                    async with connect(url, key=token, app=app) as client:
                        listed = {t.name: t for t in (await client.list_tools()).tools}
                        for spec in specs:
                            schema = listed[spec.name].input_schema
                            args = dummy(schema, schema.get("$defs", {}))
                            result = await client.call_tool(spec.name, args)
                            text = texts(result)[0] if result.content else ""
                            code = text[1 : text.index("]")] if text.startswith("[") else ""
                            status = 403 if code == "forbidden" else 200
                            check(role, spec.operation, status, code, text, key=False)
                            called += 1
        return called

    assert anyio.run(walk) == sum(len(s) for s in profiles().values()) * len(ROLES)


def test_a_token_allowed_fewer_roles_than_its_person_has_keeps_to_them(
    env: Env, role_people: dict[str, str]
) -> None:
    token = token_for(env, role_people["admin"], f"{BASE}/api/v1", ["review"])
    with TestClient(create_app(env=env, workers=0), base_url=BASE) as client:
        answer = client.get("/api/v1/keys", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 403
    assert (
        "you cannot list keys in this project: that needs the 'admin' role"
        in (answer.json()["error"]["message"])
    )


def test_every_dashboard_action_enforces_a_signed_in_persons_role(
    env: Env, role_people: dict[str, str]
) -> None:
    routes = [r for r in actions.router.routes if isinstance(r, APIRoute)]
    for role in role_people:
        with TestClient(create_app(env=env, workers=0), base_url="http://dash.test") as client:
            form = client.get("/login").text
            token = form.split('name="csrf" value="', 1)[1].split('"', 1)[0]
            done = client.post(
                "/login",
                data={"email": f"{role}@example.com", "password": PASSWORD, "csrf": token},
                follow_redirects=False,
            )
            assert done.status_code == 303, done.text
            page = client.get("/builds").text
            csrf = page.split('name="csrf-token" content="', 1)[1].split('"', 1)[0]
            for route in routes:
                operation = (route.openapi_extra or {}).get("x-operation")
                body = route.body_field
                payload = None
                if body is not None:
                    schema = body.field_info.annotation.model_json_schema()  # type: ignore[union-attr]
                    payload = dummy(schema, schema.get("$defs", {}))
                url = route.path
                for name in ("diff_id", "build_id", "comment_id", "baseline_id"):
                    url = url.replace("{" + name + "}", "x1")
                (method,) = route.methods
                answer = client.request(method, url, json=payload, headers={"x-csrf-token": csrf})
                error = answer.json().get("error", {})
                check(
                    role,
                    str(operation),
                    answer.status_code,
                    error.get("code", ""),
                    error.get("message", ""),
                    key=False,
                )
