"""A pull request seen whole: one comment body with every screenshot of it."""

from __future__ import annotations

import pytest

from tests.conftest import Keys, shot
from viewfinder.errors import NotFound
from viewfinder.services import prs, pushes
from viewfinder.services.env import Env


def test_the_pr_comment_shows_every_screenshot_of_the_pr(env: Env, keys: Keys) -> None:
    for name in ("home", "cart"):
        pushes.push(env, keys.ci, shot(), name=name, pr_number=8, repo="acme/web", compare=True)
    body = prs.pr_comment(env, keys.ci, pr_number=8, repo="acme/web")
    assert body.startswith("## Viewfinder: screenshots of acme/web#8")
    assert "### cart (new baseline)" in body and "### home (new baseline)" in body
    assert body.count("![") == 2
    with pytest.raises(NotFound):
        prs.pr_comment(env, keys.ci, pr_number=9, repo="acme/web")
