"""The application: every rule lives here, once. REST, MCP, the CLI and the dashboard call these
functions with an Actor and typed inputs, and get typed records back or a ViewfinderError."""
