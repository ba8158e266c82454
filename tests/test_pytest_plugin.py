"""The pytest plugin as a user's project meets it: a pytest of its own (pytester, in a
subprocess) with pytest-playwright driving Debian's Chromium, checking pages against baselines in
the repository and against a real `viewfinder serve`, masks included."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.chromium import CHROMIUM, FLAGS
from tests.server import running_server
from viewfinder import imaging

pytest_plugins = ["pytester"]

CONFTEST = f"""
import pytest

@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {{**browser_type_launch_args, "executable_path": {CHROMIUM!r}, "args": {list(FLAGS)!r}}}

@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {{**browser_context_args, "viewport": {{"width": 320, "height": 200}},
             "device_scale_factor": 2}}
"""

# The page a test checks; TITLE and CLOCK change between runs.
TEST = """
import os

PAGE = '''<html><body style="margin:0;font:16px sans-serif;background:#fff">
<h1 style="margin:8px">{title}</h1>
<p id="clock" style="position:absolute;left:200px;top:120px;margin:0;width:100px">{clock}</p>
<p id="card" style="position:absolute;left:10px;top:150px;width:80px;height:30px;margin:0;
  background:{card}"></p></body></html>'''


def test_checkout(page, viewfinder_check):
    page.set_content(PAGE.format(title=os.environ.get("TITLE", "Checkout"),
                                 clock=os.environ.get("CLOCK", "10:00"),
                                 card=os.environ.get("CARD", "#2050c0")))
    viewfinder_check(page, "checkout", masks=[page.locator("#clock")])
    viewfinder_check(page.locator("#card"), "card")
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_shop=TEST)
    return pytester


def run(project: pytest.Pytester, *args: str, **environ: str) -> pytest.RunResult:
    for name, value in environ.items():
        project._monkeypatch.setenv(name, value)
    # The user's own run: none of this repository's options or plugins but theirs, loaded by
    # their entry points' names (Viewfinder's as installed), not every plugin this
    # repository's environment holds (hypothesis and schemathesis take 1.8 s to import).
    project._monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    plugins = ["-p", "playwright", "-p", "viewfinder", "-p", "no:cacheprovider"]
    if "-n" in args:
        plugins += ["-p", "xdist"]
    return project.runpytest_subprocess(*plugins, *args)


def test_local_baselines_are_written_then_checked_with_masks_and_a_diff_image_on_failure(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VIEWFINDER_URL", raising=False)
    baselines = project.path / "__viewfinder__" / "test_shop"

    first = run(project)
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines(["*no baseline for screenshot 'checkout'*commit it*"])
    checkout = (baselines / "checkout.png").read_bytes()
    header = imaging.read_header(checkout)
    assert (header.width, header.height) == (640, 400)  # the device scale, 2

    # Each failing check writes its baseline: the second run writes the card's and passes on
    # the page; the third checks both.
    run(project).assert_outcomes(failed=1)
    assert (baselines / "card.png").exists()
    run(project).assert_outcomes(passed=1)
    # What changes under a mask is not a change.
    run(project, CLOCK="23:59").assert_outcomes(passed=1)

    changed = run(project, TITLE="Checkout now")
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(
        [
            "*screenshot 'checkout' differs from its baseline: *% of pixels*region*",
            "*diff:*checkout.diff.png",
            "*--viewfinder-update*",
        ]
    )
    (out,) = (project.path / "test-results" / "viewfinder").iterdir()
    clock = imaging.Mask(400, 240, 200, 40)  # #clock at the device scale, as the check masks it
    diff = imaging.compare(checkout, (out / "checkout.actual.png").read_bytes(), masks=[clock])
    assert diff.changed and all(r.y + r.height < 120 for r in diff.regions)  # the title
    assert imaging.read_header((out / "checkout.diff.png").read_bytes()).width == 640
    assert (baselines / "checkout.png").read_bytes() == checkout  # a failure writes no baseline

    run(project, "--viewfinder-update", TITLE="Checkout now").assert_outcomes(passed=1)
    assert (baselines / "checkout.png").read_bytes() != checkout
    run(project, TITLE="Checkout now").assert_outcomes(passed=1)


def test_a_server_gets_one_build_per_session_and_the_session_fails_on_changes(
    project: pytest.Pytester, tmp_path: Path
) -> None:
    with running_server("sqlite", tmp_path) as server:
        environ = {
            "VIEWFINDER_URL": server.url,
            "VIEWFINDER_KEY": server.keys["ci"],
            "VIEWFINDER_BRANCH": "main",
        }
        first = run(project, VIEWFINDER_COMMIT="aaaa1111", **environ)
        first.assert_outcomes(passed=1)
        assert first.ret == 0
        first.stdout.fnmatch_lines(["*viewfinder*", "*build bld_*: unchanged*2 new*"])

        # The clock is masked (painted over before the upload): the same screenshot.
        again = run(project, VIEWFINDER_COMMIT="bbbb2222", CLOCK="23:59", **environ)
        assert again.ret == 0, again.stdout.str()
        again.stdout.fnmatch_lines(["*build bld_*: unchanged*2 unchanged*"])

        # Two xdist workers still make one build; a changed card (in both screenshots) fails
        # the session.
        changed = run(project, "-n", "2", VIEWFINDER_COMMIT="cccc3333", CARD="#c02050", **environ)
        changed.assert_outcomes(passed=1)
        assert changed.ret == 1
        changed.stdout.fnmatch_lines(["*build bld_*: changed, review pending*2 changed*"])
        builds = httpx.get(
            f"{server.url}/api/v1/builds",
            headers={"Authorization": f"Bearer {server.keys['ci']}"},
        ).json()["items"]
        assert [b["commit_sha"] for b in builds] == ["cccc3333", "bbbb2222", "aaaa1111"]
        assert builds[0]["counts"]["changed"] == 2

        tolerant = run(
            project,
            "--viewfinder-exit-zero-on-changes",
            VIEWFINDER_COMMIT="dddd4444",
            CARD="#c02050",
            **environ,
        )
        assert tolerant.ret == 0


def test_a_phone_screenshot_is_judged_at_its_device_scale(tmp_path: Path) -> None:
    # In process (no pytest of its own): the plugin's shot of a page at device scale 3 whose
    # text was drawn again with letter-spacing 0.01 px off, checked against the first shot.
    from types import SimpleNamespace

    from playwright.sync_api import sync_playwright

    from tests import style_corpus
    from viewfinder.pytest_plugin.check import LocalBaselines
    from viewfinder.pytest_plugin.shots import take

    width, height = style_corpus.PHONE_VIEWPORT
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(FLAGS))
        page = browser.new_context(
            viewport={"width": width, "height": height}, device_scale_factor=3
        ).new_page()
        shots = []
        for variant in (None, "glyph_spacing"):
            page.set_content(style_corpus.html_of("shop", variant), wait_until="load")
            page.evaluate("() => document.fonts.ready")
            shots.append(take(page, [], full_page=False, paint=False))
        browser.close()
    base, respaced = shots
    assert base.scale == respaced.scale == 3.0
    # Taken for scale 2, the glyphs drawn again 3 px off are a change...
    assert imaging.compare(base.png, respaced.png, ignore_noise=True).changed
    # ... and the plugin, which knows the scale, passes them as noise.
    node = SimpleNamespace(path=tmp_path / "test_phone.py", nodeid="test_phone.py::test_shop")
    check = LocalBaselines(tmp_path / "baselines", tmp_path / "out", update=False)
    (tmp_path / "baselines" / "test_phone").mkdir(parents=True)
    (tmp_path / "baselines" / "test_phone" / "shop.png").write_bytes(base.png)
    check.check(node, "shop", respaced, threshold=0.1, max_diff_ratio=0.0)  # type: ignore[arg-type]
    assert not (tmp_path / "out").exists()
