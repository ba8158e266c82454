"""The REST API and the ASGI app that also serves (later) MCP and the dashboard."""
