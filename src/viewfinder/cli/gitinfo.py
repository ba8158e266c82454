"""What the CLI can learn from the environment and the git checkout it runs in: the repository
of a PR and the current commit."""

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


def repo_for_pr(given: str | None) -> str:
    """The repository a --pr belongs to, or exit 2 asking for --repo."""
    from viewfinder.cli.output import fail

    repo = resolve_repo(given)
    if repo is None:
        fail(
            "--pr needs the repository: pass --repo owner/name (or set VIEWFINDER_REPO); it "
            "could not be read from GITHUB_REPOSITORY or a GitHub `origin` remote"
        )
    return repo
