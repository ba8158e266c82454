"""What the front doors (api, mcp, cli, web) share and none of them owns: running a blocking
service call off the event loop, and what can be read from the caller's git checkout. Adapters
never import each other; they meet here and in services/."""
