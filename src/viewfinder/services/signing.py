"""Tamper-evident tokens: pagination cursors and expiring image URLs are signed with the
server's secret, so a client can hand them back but cannot forge or alter them."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable
from typing import Any

from viewfinder.errors import InvalidInput


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Signer:
    """Signs and checks tokens with the server's secret; ``clock`` (seconds since the epoch)
    decides when a token with a lifetime expires."""

    def __init__(self, secret: str, *, clock: Callable[[], float] = time.time) -> None:
        self._key = hashlib.sha256(secret.encode()).digest()
        self._clock = clock

    def _mac(self, purpose: str, payload: bytes) -> str:
        mac = hmac.new(self._key, purpose.encode() + b"\0" + payload, hashlib.sha256)
        return _b64(mac.digest()[:16])

    def sign(self, purpose: str, value: Any, *, ttl: int | None = None) -> str:
        body: dict[str, Any] = {"v": value}
        if ttl is not None:
            body["exp"] = int(self._clock()) + ttl
        payload = json.dumps(body, separators=(",", ":")).encode()
        return f"{_b64(payload)}.{self._mac(purpose, payload)}"

    def unsign(self, purpose: str, token: str, *, what: str = "token") -> Any:
        """The signed value. Raises InvalidInput for a token that was altered, made for another
        purpose, or has expired."""
        try:
            encoded, mac = token.split(".", 1)
            payload = _unb64(encoded)
            # Bytes, not str: compare_digest refuses non-ASCII text, and a token is user input.
            valid = hmac.compare_digest(mac.encode(), self._mac(purpose, payload).encode())
            body = json.loads(payload) if valid else None
        except (ValueError, UnicodeDecodeError):
            body = None
        if not isinstance(body, dict) or "v" not in body:
            raise InvalidInput(
                f"invalid {what}: pass back exactly the value a previous response gave, "
                "or leave it out to start from the beginning"
            )
        if "exp" in body and body["exp"] < self._clock():
            raise InvalidInput(f"the {what} has expired: ask for a fresh one")
        return body["v"]


def _sealing_key(signer: Signer, purpose: str) -> bytes:
    # A key of its own per purpose, derived from the server's: a token that signs links
    # never decrypts a secret, and a stolen database without the server's secret reads nothing.
    derived = hmac.new(signer._key, b"seal\0" + purpose.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(derived)


def seal(signer: Signer, purpose: str, plaintext: str) -> str:
    """The text encrypted and authenticated (Fernet) with a key derived from the secret."""
    from cryptography.fernet import Fernet

    return Fernet(_sealing_key(signer, purpose)).encrypt(plaintext.encode()).decode()


def unseal(signer: Signer, purpose: str, sealed: str) -> str | None:
    """The text ``seal`` sealed, or None when this server's secret cannot open it (the secret
    changed since)."""
    from cryptography.fernet import Fernet, InvalidToken

    try:
        return Fernet(_sealing_key(signer, purpose)).decrypt(sealed.encode()).decode()
    except InvalidToken:
        return None
