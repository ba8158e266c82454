"""Everything the workers run, registered by the services that own it: importing those
services is what registers their job kinds, comparison owners and periodic tasks. A worker
process calls ``register()`` once before it starts claiming jobs."""

from __future__ import annotations


def register() -> None:
    """Import every service that owns background work (each registers itself on import)."""
    from viewfinder.services import (  # noqa: F401
        builds,
        checkup_purge,
        checkup_shots,
        comparisons,
        contexts,
        deployments,
        github,
        pushes,
        storage,
        webhooks,
    )
    from viewfinder.services.testruns import work  # noqa: F401
