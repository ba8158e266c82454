"""Arguments that name one thing in several ways ("a build by its id, commit or PR"): exactly
one of them is given, or the caller learns which it may give. Each front door passes its own
names for them, so the message speaks its caller's vocabulary."""

from __future__ import annotations

from collections.abc import Mapping

from viewfinder.errors import InvalidInput


def exactly_one(given: Mapping[str, object]) -> str:
    """The name of the one argument that is not None. Raises InvalidInput naming them all."""
    present = [name for name, value in given.items() if value is not None]
    if len(present) == 1:
        return present[0]
    names = list(given)
    listed = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
    raise InvalidInput(
        f"give exactly one of {listed}" + (" (none given)" if not present else " (several given)"),
        given=present,
    )
