"""Whether one comparison may take a second core: to decode a pair's images side by side, to
label a heavily changed pair's pixels in two threads, and to judge a run of regions for noise
in two. A command or a library call may. A process that runs one comparison a core already
(the server's API process and workers) keeps each comparison to its own thread, where a second
would only take a core from another comparison (bench.scale, four workers on two cores: 43
comparisons/s decoding side by side, 58 one at a time)."""

from __future__ import annotations

_spread = True


def keep_to_one() -> None:
    """From now on this process's comparisons keep to the thread that runs them."""
    global _spread
    _spread = False


def may_spread() -> bool:
    """Whether a comparison may take a second core."""
    return _spread
