"""One build per test session on a Viewfinder server, whatever the number of xdist workers:
each process opens the build with the same idempotency key, so all of them get the one the
first opened, and the process that ran the session finalizes it once they are done."""

from __future__ import annotations

import os
import re
import time
import uuid
from typing import Any

import pytest

from viewfinder.pytest_plugin.shots import Shot

_PR_REF = re.compile(r"^refs/pull/(\d+)/")


def _first(*names: str) -> str | None:
    return next((os.environ[n] for n in names if os.environ.get(n)), None)


def where_from() -> dict[str, Any]:
    """The commit, branch and pull request the screenshots show, as the CLI reads them in CI:
    Viewfinder's variables first, then GitHub Actions', then the git checkout."""
    from viewfinder.plumbing import gitinfo

    commit = _first("VIEWFINDER_COMMIT", "GITHUB_SHA") or gitinfo.head_commit()
    if not commit:
        raise pytest.UsageError(
            "viewfinder: no commit for the build: set VIEWFINDER_COMMIT, or run in a git checkout"
        )
    branch = _first("VIEWFINDER_BRANCH", "GITHUB_HEAD_REF", "GITHUB_REF_NAME")
    pr_text = _first("VIEWFINDER_PR")
    if pr_text is None:
        ref = _PR_REF.match(os.environ.get("GITHUB_REF", ""))
        pr_text = ref.group(1) if ref else None
    pr = int(pr_text) if pr_text and pr_text.isdigit() else None
    repo = gitinfo.resolve_repo(None)
    return {"commit_sha": commit, "branch": branch, "repo": repo, "pr_number": pr}


class RemoteBuild:
    def __init__(self, url: str, key: str | None, token: str | None = None) -> None:
        self.url = url
        self.key = key
        self.token = token or uuid.uuid4().hex  # shared with xdist workers
        self.build_id: str | None = None
        self.report: list[str] = []
        self._client: Any = None

    @property
    def opened(self) -> bool:
        return self.build_id is not None

    def _open(self) -> Any:
        from viewfinder.cli.client import Client, ClientError

        if self._client is None:
            try:
                self._client = Client(self.url, self.key)
            except ClientError as exc:
                raise pytest.UsageError(f"viewfinder: {exc.message}") from None
        if self.build_id is None:
            build = self._client.request(
                "POST",
                "/builds",
                body=where_from(),
                headers={"Idempotency-Key": f"pytest-{self.token}"},
                retry=True,
            )
            self.build_id = build["id"]
        return self._client

    def adopt(self, build_id: str) -> None:
        """A worker's build, which this process (the one that ran the session) finalizes."""
        self.build_id = build_id

    def add(self, name: str, shot: Shot) -> None:
        from viewfinder.cli.client import ClientError, segment

        try:
            client = self._open()
            client.request(
                "PUT",
                f"/builds/{segment(self.build_id or '')}/stories",
                params={"name": name, "variant": shot.viewport, "scale": shot.scale},
                content=shot.png,
                retry=True,  # the same bytes under the same name are stored once
            )
        except ClientError as exc:
            pytest.fail(f"viewfinder: screenshot {name!r} was not uploaded: {exc.message}")

    def finish(self, *, wait: float, changes_fail: bool) -> bool:
        """Finalize the build and wait for its comparisons; whether the session should fail."""
        from viewfinder.cli.client import ClientError, segment

        try:
            client = self._open()
            path = f"/builds/{segment(self.build_id or '')}"
            build = client.post(f"{path}/finalize", retry=True)
            deadline = time.monotonic() + wait
            while build["status"] != "done" and time.monotonic() < deadline:
                time.sleep(0.2)
                build = client.get(path, limit=1)
        except ClientError as exc:
            self.report.append(f"build {self.build_id}: not finished: {exc.message}")
            return True
        finally:
            if self._client is not None:
                self._client.close()
        counts = build["counts"]
        shown = ", ".join(f"{n} {state}" for state, n in counts.items() if n)
        if build["status"] != "done":
            self.report.append(
                f"build {build['id']}: still comparing after {wait:g} s ({shown}); "
                f"see {build['url']}"
            )
            return True
        verdict, review = build["verdict"], build["review"]
        said = f", review {review}" if review != "none" else ""
        self.report.append(f"build {build['id']}: {verdict}{said} ({shown})")
        self.report.append(f"  {build['url']}")
        # Changes already accepted (decisions carried over within a PR) await nobody.
        awaiting = verdict == "changed" and review != "accepted"
        return verdict == "failed" or (awaiting and changes_fail)
