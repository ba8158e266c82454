"""`viewfinder capture` as a user runs it: a real process writing PNGs, DOM and boxes JSON and
the second opinion for a page, an email and a PDF; exit 2 with a clear message on bad input,
a refused address or a failed capture; and a CLI that starts without loading Playwright."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.capture_site import FLAWED, WIDE_EMAIL, Site, running_site, slide_deck
from tests.server import clean_environ
from viewfinder.imaging import decode

VIEWFINDER = str(Path(sys.executable).with_name("viewfinder"))


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with running_site() as s:
        yield s


@pytest.fixture(scope="module")
def deck() -> bytes:
    return slide_deck()


def run(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [VIEWFINDER, "capture", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env or clean_environ(),
    )


def test_a_page_is_written_with_its_dom_boxes_and_findings(site: Site, tmp_path: Path) -> None:
    site.files["/flawed"] = (FLAWED.encode(), "text/html")
    out = tmp_path / "shots"
    done = run(f"{site.url}/flawed", "--mobile", "--out", out, "--allow", f"127.0.0.1:{site.port}")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "findings.json",
        "mobile.boxes.json",
        "mobile.dom.json",
        "mobile.png",
    ]
    assert decode((out / "mobile.png").read_bytes()).shape[:2] == (1624, 750)
    assert json.loads((out / "mobile.dom.json").read_text())["title"] == "Offers"
    boxes = json.loads((out / "mobile.boxes.json").read_text())
    assert boxes["scale"] == 2 and any(b["name"] == "Share" for b in boxes["boxes"])
    findings = json.loads((out / "findings.json").read_text())
    assert {"contrast", "text-size", "tap-target"} <= {f["rule"] for f in findings}
    assert all(f["label"] == "mobile" for f in findings)
    assert f"wrote {out / 'mobile.png'}" in done.stdout
    assert "mobile: 750x1624 px at device scale 2" in done.stdout
    assert "a11y contrast on mobile at (" in done.stdout


def test_an_email_file_and_a_pdf_file_are_captured_whole(
    tmp_path: Path,
    deck: bytes,
) -> None:
    email = tmp_path / "news.html"
    email.write_text(WIDE_EMAIL)
    done = run(email, "--out", tmp_path / "email", "--json")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert [s["label"] for s in printed["shots"]] == ["light", "dark"]
    assert [f["rule"] for f in printed["findings"]] == ["email-width"]
    assert (tmp_path / "email" / "dark.png").exists()
    slides = tmp_path / "deck.pdf"
    slides.write_bytes(deck)
    done = run(slides, "--out", tmp_path / "pdf")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "pdf").glob("*.png")) == [
        f"page-{n}.png" for n in range(1, 6)
    ]
    assert "slide-density on page-2" in done.stdout
    assert "note: the PDF has 7 pages; the first 5 were rendered" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["notes.txt"], "is not a URL (http or https), an .html file or a .pdf file"),
        (["file:///etc/passwd"], "file:, data: and other schemes are not captured"),
        (["missing.pdf"], "missing.pdf does not exist"),
        (["http://127.0.0.1:9/"], "[address_refused] http://127.0.0.1:9/ is a loopback address"),
        (["http://example.test/", "--allow", "exa mple"], "[invalid_input] capture allow-list"),
        (["http://example.test/", "--type", "poster"], "--type 'poster' is not one of"),
        (["deck.pdf", "--mobile"], "--mobile applies to pages and emails, not to a PDF"),
    ],
)
def test_bad_input_and_refused_addresses_exit_2_with_a_message(
    args: list[str], message: str, tmp_path: Path
) -> None:
    done = run(*args, "--out", tmp_path / "out")
    assert done.returncode == 2
    assert message in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_failed_capture_exits_2_and_says_why(site: Site, tmp_path: Path) -> None:
    env = clean_environ() | {"VIEWFINDER_CAPTURE_TIMEOUT_SECONDS": "2"}
    done = run(f"{site.url}/slow", "--out", tmp_path, "--allow", f"127.0.0.1:{site.port}", env=env)
    assert done.returncode == 2
    assert "[capture_failed] the capture did not finish within 2 s" in done.stderr


def test_the_cli_and_the_engine_start_without_loading_playwright() -> None:
    probe = (
        "import sys, viewfinder.main, viewfinder.capture; "
        "print([m for m in ('playwright', 'pypdfium2') if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
