"""Viewfinder's pytest plugin: installing Viewfinder is enough (entry point ``pytest11``).

The ``viewfinder_check`` fixture takes a screenshot of a Playwright page or locator and checks
it. With a server configured (``--viewfinder-url`` or VIEWFINDER_URL, and VIEWFINDER_KEY), every
screenshot of the test session goes into one build of that server, compared with its approved
baselines; the session fails when changes await review. Without one, each screenshot is compared
with a PNG baseline kept in the repository, by the same engine (rendering noise ignored), and a
test whose screenshot changed fails with the numbers and a diff image.

This module is imported by every pytest run where Viewfinder is installed, so it imports nothing
heavy until a test asks for the fixture.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from viewfinder.pytest_plugin.check import Checker
    from viewfinder.pytest_plugin.remote import RemoteBuild

_BUILD = pytest.StashKey["RemoteBuild | None"]()
_TOKEN = "viewfinder_token"
_BUILD_ID = "viewfinder_build_id"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("viewfinder", "visual checks with Viewfinder")
    group.addoption(
        "--viewfinder-update",
        action="store_true",
        default=False,
        help="Write each screenshot as its new local baseline instead of checking it.",
    )
    group.addoption(
        "--viewfinder-url",
        default=None,
        help="A Viewfinder server to send the session's screenshots to as one build "
        "(default VIEWFINDER_URL; without either, local baselines are used).",
    )
    group.addoption(
        "--viewfinder-wait",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="How long the session waits for the server's comparisons at its end.",
    )
    group.addoption(
        "--viewfinder-exit-zero-on-changes",
        action="store_true",
        default=False,
        help="With a server: do not fail the session when changes await review.",
    )
    parser.addini(
        "viewfinder_baselines",
        "Folder of local baselines, relative to the root directory.",
        default="__viewfinder__",
    )
    parser.addini(
        "viewfinder_output",
        "Folder where failed local checks write actual and diff images.",
        default="test-results/viewfinder",
    )


def _server_url(config: pytest.Config) -> str | None:
    return config.getoption("--viewfinder-url") or os.environ.get("VIEWFINDER_URL") or None


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_BUILD] = None


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")  # an xdist worker


def _remote(config: pytest.Config) -> RemoteBuild | None:
    url = _server_url(config)
    if url is None:
        return None
    build = config.stash[_BUILD]
    if build is None:
        from viewfinder.pytest_plugin.remote import RemoteBuild

        token = config.workerinput.get(_TOKEN) if _is_worker(config) else None  # type: ignore[attr-defined]
        build = RemoteBuild(url, os.environ.get("VIEWFINDER_KEY"), token)
        config.stash[_BUILD] = build
    return build


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: every worker opens the session's one build by the same key."""
    build = _remote(node.config)
    if build is not None:
        node.workerinput[_TOKEN] = build.token


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist: the session's process finalizes the build a worker uploaded to."""
    build_id = getattr(node, "workeroutput", {}).get(_BUILD_ID)
    build = _remote(node.config)
    if build_id and build is not None:
        build.adopt(build_id)


@pytest.fixture
def viewfinder_check(request: pytest.FixtureRequest) -> Iterator[Checker]:
    """``viewfinder_check(page_or_locator, "name", masks=[locator], full_page=False)``: take the
    screenshot and check it (locally against ``<baselines>/<test file>/<name>.png``, or as a
    story of the session's build on the server)."""
    from viewfinder.pytest_plugin.check import Checker, LocalBaselines

    config = request.config
    remote = _remote(config)
    local = None
    if remote is None:
        root = Path(config.rootpath)
        local = LocalBaselines(
            baselines=root / str(config.getini("viewfinder_baselines")),
            output=root / str(config.getini("viewfinder_output")),
            update=bool(config.getoption("--viewfinder-update")),
        )
    yield Checker(request.node, local=local, remote=remote)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    build = config.stash.get(_BUILD, None)
    if build is None or not build.opened:
        return
    if _is_worker(config):
        config.workeroutput[_BUILD_ID] = build.build_id  # type: ignore[attr-defined]
        return
    failed = build.finish(
        wait=float(config.getoption("--viewfinder-wait")),
        changes_fail=not config.getoption("--viewfinder-exit-zero-on-changes"),
    )
    if failed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    build = config.stash.get(_BUILD, None)
    if build is None or not build.report:
        return
    terminalreporter.section("viewfinder")
    for line in build.report:
        terminalreporter.write_line(line)
