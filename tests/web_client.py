"""Signing in to the dashboard with a key, as a browser does, for tests that drive it over
HTTP without a browser."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient


def sign_in(client: TestClient, key: str) -> str:
    """Sign in with the key and return the session's CSRF token."""
    form = client.get("/login").text
    token = re.search(r'name="csrf" value="([^"]+)"', form)
    assert token is not None
    done = client.post("/login", data={"key": key, "csrf": token.group(1)}, follow_redirects=False)
    assert done.status_code == 303, done.text
    page = client.get("/builds").text
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', page)
    assert csrf is not None
    return csrf.group(1)
