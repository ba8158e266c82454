"""The MCP server: every tool declared once (tooling.ToolSpec), served in profiles over
Streamable HTTP (mounted in the app) and stdio (`viewfinder mcp`)."""
