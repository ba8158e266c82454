"""Where `upload --pr` and `push --pr` find the repository when --repo is not given."""

from __future__ import annotations

import pytest

from viewfinder.plumbing.gitinfo import github_repo, resolve_repo


@pytest.mark.parametrize(
    ("remote", "repo"),
    [
        ("https://github.com/acme/web.git", "acme/web"),
        ("https://github.com/acme/web", "acme/web"),
        ("https://github.com/acme/web/", "acme/web"),
        ("git@github.com:acme/web.git", "acme/web"),
        ("ssh://git@github.com/acme/web.git", "acme/web"),
        ("https://x-access-token:t@github.com/acme/web.js.git\n", "acme/web.js"),
        ("https://gitlab.com/acme/web.git", None),
        ("/srv/git/web.git", None),
    ],
)
def test_github_remotes_name_their_repository(remote: str, repo: str | None) -> None:
    assert github_repo(remote) == repo


def test_the_option_wins_then_viewfinder_repo_then_github_repository(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VIEWFINDER_REPO", "acme/one")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/two")
    assert resolve_repo("acme/given") == "acme/given"
    assert resolve_repo(None) == "acme/one"
    monkeypatch.delenv("VIEWFINDER_REPO")
    assert resolve_repo(None) == "acme/two"
