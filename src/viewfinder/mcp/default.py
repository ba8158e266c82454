"""The default profile: Viewfinder's own vocabulary, one tool per job. The identity, review and
delivery tools are declared in their own modules (get_project, the project overview, is the
review module's), and so are session replays (default_replays.py)."""

from __future__ import annotations

from viewfinder.mcp import default_delivery, default_replays, default_review, identity, revisemy
from viewfinder.mcp.tooling import ToolSpec

TOOLS: list[ToolSpec] = [
    *identity.DEFAULT_TOOLS,
    *default_review.TOOLS,
    *default_delivery.TOOLS,
    *revisemy.DEFAULT_TOOLS,
    *default_replays.TOOLS,
]
