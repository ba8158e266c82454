"""Signed, expiring URLs for stored images (baselines, candidates, diffs), for scripts and the
dashboard. The token carries the blob's hash and an expiry; no key is needed to fetch it."""

from __future__ import annotations

from viewfinder.services.env import Env


def file_url(env: Env, sha256: str, *, ttl: int | None = None) -> str:
    token = env.signer.sign("file", sha256, ttl=ttl or env.settings.url_ttl_seconds)
    return f"{env.settings.public_url}/api/v1/files/{token}"


def open_file(env: Env, token: str) -> bytes:
    """The bytes behind a signed URL. Raises InvalidInput for a forged or expired token and
    NotFound for a blob that is gone."""
    sha256 = env.signer.unsign("file", token, what="image link")
    return env.blobs.get(str(sha256))
