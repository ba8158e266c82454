"""Signed tokens (cursors, image links) refuse anything they did not make, whatever its bytes."""

from __future__ import annotations

import pytest

from viewfinder.errors import InvalidInput
from viewfinder.services.signing import Signer


def test_a_token_round_trips_for_its_purpose_only() -> None:
    signer = Signer("secret")
    token = signer.sign("cursor", {"k": [1, "a"]})
    assert signer.unsign("cursor", token) == {"k": [1, "a"]}
    with pytest.raises(InvalidInput, match="invalid token"):
        signer.unsign("view", token)


@pytest.mark.parametrize(
    "token", [".\u0080", "abc.\u00e9t\u00e9", "\udc80.x", "", ".", "no-dot", "e30.AAAA"]
)
def test_tokens_that_were_never_signed_are_refused_as_invalid_input(token: str) -> None:
    with pytest.raises(InvalidInput, match="pass back exactly the value"):
        Signer("secret").unsign("view", token, what="token")


def test_a_token_with_a_lifetime_works_until_it_expires() -> None:
    now = [1_000_000.0]
    signer = Signer("secret", clock=lambda: now[0])
    token = signer.sign("view", "img_1", ttl=60)
    now[0] += 60
    assert signer.unsign("view", token) == "img_1"
    now[0] += 1
    with pytest.raises(InvalidInput, match="has expired"):
        signer.unsign("view", token)
