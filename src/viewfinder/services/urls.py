"""Signed, expiring URLs for stored images (baselines, candidates, diffs), for scripts and the
dashboard. The token carries the blob's hash and an expiry; no key is needed to fetch it."""

from __future__ import annotations

from viewfinder.errors import InvalidInput, NotFound
from viewfinder.services.env import Env


def file_url(env: Env, sha256: str, *, ttl: int | None = None) -> str:
    token = env.signer.sign("file", sha256, ttl=ttl or env.settings.url_ttl_seconds)
    return f"{env.settings.public_url}/api/v1/files/{token}"


def link_target(env: Env, purpose: str, token: str) -> str:
    """What a signed link names. A link that does not verify (made up, altered, expired)
    names nothing: NotFound, saying which, so a person knows to ask for a fresh link."""
    try:
        return str(env.signer.unsign(purpose, token, what="image link"))
    except InvalidInput as exc:
        raise NotFound(f"no such image: {exc.message}") from None


def open_file(env: Env, token: str) -> bytes:
    """The bytes behind a signed URL. Raises NotFound for a forged or expired token and for a
    blob that is gone."""
    return env.blobs.get(link_target(env, "file", token))
