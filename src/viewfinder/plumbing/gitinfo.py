"""What a command on the caller's machine (the CLI, the stdio MCP server) can learn from the
environment and the git checkout it runs in: the repository of a PR and the current commit."""

from __future__ import annotations

import os
import re
import subprocess

# git@github.com:owner/name.git, https://github.com/owner/name, ssh://git@github.com/owner/name
_GITHUB = re.compile(r"github\.com[:/]+([^/\s]+)/([^/\s]+?)(?:\.git)?/*$")


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def github_repo(remote: str) -> str | None:
    """owner/name of a GitHub remote URL (https, ssh or scp-like), else None."""
    match = _GITHUB.search(remote.strip())
    return f"{match.group(1)}/{match.group(2)}" if match else None


def origin_repo() -> str | None:
    remote = _git("remote", "get-url", "origin")
    return github_repo(remote) if remote else None


def resolve_repo(given: str | None) -> str | None:
    """--repo, else VIEWFINDER_REPO, else GITHUB_REPOSITORY (set in GitHub Actions), else the
    origin remote."""
    for candidate in (
        given,
        os.environ.get("VIEWFINDER_REPO"),
        os.environ.get("GITHUB_REPOSITORY"),
    ):
        if candidate:
            return candidate
    return origin_repo()


def head_commit() -> str | None:
    return _git("rev-parse", "HEAD")
