"""The default profile: Viewfinder's own vocabulary, one tool per job. The review tools and the
delivery tools are declared in their own modules."""

from __future__ import annotations

from viewfinder.mcp import default_delivery, default_review, revisemy
from viewfinder.mcp.tooling import ToolSpec

TOOLS: list[ToolSpec] = [*default_review.TOOLS, *default_delivery.TOOLS, *revisemy.DEFAULT_TOOLS]
