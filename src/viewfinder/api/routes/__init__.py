"""REST routes under /api/v1, one module per area; each route parses, calls one service
function and returns its record."""
