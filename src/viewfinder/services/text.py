"""Text that people and agents send: bounded, and free of control characters (a NUL byte is
refused by PostgreSQL and invisible in every view), checked once for every field."""

from __future__ import annotations

import re
import unicodedata

from viewfinder.errors import InvalidInput

SHA_PATTERN = r"^[0-9a-fA-F]{4,40}$"
_SHA = re.compile(SHA_PATTERN)
# What check_text accepts, for documents that describe a field (the OpenAPI document): no
# control character (C0, DEL, C1), and something besides spaces. TEXT allows line breaks and tabs.
_CONTROL = "\\x00-\\x1f\\x7f-\\x9f"
_TEXT_CONTROL = "\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f"
LINE_PATTERN = f"^[^{_CONTROL}]*[^\\s{_CONTROL}][^{_CONTROL}]*$"
OPTIONAL_LINE_PATTERN = f"^[^{_CONTROL}]*$"
TEXT_PATTERN = f"^[^{_TEXT_CONTROL}]*[^\\s{_CONTROL}][^{_TEXT_CONTROL}]*$"
# Line breaks and tabs are text in a comment; every other control character is not.
_MULTILINE_OK = frozenset("\n\r\t")


def check_text(
    what: str, value: object, *, maximum: int, minimum: int = 1, multiline: bool = True
) -> str:
    """The value when it is a string of ``minimum`` to ``maximum`` characters (not only
    spaces) without control characters. Raises InvalidInput naming the field."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be text (got {type(value).__name__})")
    if minimum and not value.strip():
        raise InvalidInput(f"{what} is {minimum} to {maximum} characters; this one is empty")
    if len(value) > maximum:
        raise InvalidInput(
            f"{what} is {minimum} to {maximum} characters; this one has {len(value)}"
        )
    allowed = _MULTILINE_OK if multiline else frozenset()
    for position, char in enumerate(value):
        if char not in allowed and unicodedata.category(char) in ("Cc", "Cs"):
            raise InvalidInput(
                f"{what} contains a control character (U+{ord(char):04X}) at position "
                f"{position}: remove it"
            )
    return value


def check_sha(sha: object) -> str:
    """A commit id: 4 to 40 hexadecimal digits (a full SHA-1 or an abbreviation), lower-cased.
    Raises InvalidInput."""
    if not isinstance(sha, str) or not _SHA.match(sha):
        raise InvalidInput(
            f"commit_sha {sha!r} is not a commit id: 4 to 40 hexadecimal digits, e.g. the "
            "output of `git rev-parse HEAD`"
        )
    return sha.lower()


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>])")


def markdown_text(text: str) -> str:
    """Text as literal Markdown: the characters that open a link, an image, emphasis, code or
    HTML are escaped, so a screenshot named ``a](https://evil.example/x.png)![b`` stays a name
    and loads nothing. Parentheses alone do nothing and stay as they are (``home (64x48)``)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(text.split()))
