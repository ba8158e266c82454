"""The second opinion finds, with areas on the right place, what test pages were built to
contain (low-contrast text, small text, tiny crowded tap targets, nothing to click above the
fold, an email too wide, an email whose dark rendering loses its text and logo, a crowded
slide, an image without alt text) and nothing at all on the clean pages."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from tests.capture_site import (
    CLEAN_EMAIL,
    DARK_LOSING_EMAIL,
    WIDE_EMAIL,
    Site,
    running_site,
    slide_deck,
)
from viewfinder.capture import (
    Area,
    Finding,
    Shot,
    capture_html,
    capture_url,
    check_shot,
    render_pdf,
    second_opinion,
)
from viewfinder.capture.checks.areas import PER_RULE, area, overlap
from viewfinder.capture.checks.pixels import measure
from viewfinder.errors import InvalidInput


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with running_site() as s:
        yield s


@pytest.fixture(scope="module")
def deck() -> bytes:
    return slide_deck()


def _where(
    shot: Shot, *, text: str | None = None, name: str | None = None, tag: str | None = None
) -> Area:
    [box] = [
        b
        for b in shot.boxes
        if (text and b.text == text) or (name and b.name == name) or (tag and b.tag == tag)
    ]
    found = area(shot, (box.x, box.y, box.w, box.h))
    assert found is not None
    return found


FAINT = "This grey sentence is hard to read on white."


def _one(findings: list[Finding], rule: str, label: str) -> Finding:
    [finding] = [f for f in findings if f.rule == rule and f.label == label]
    return finding


def test_a_clean_page_gets_no_findings(site: Site) -> None:
    shots = capture_url(f"{site.url}/clean", policy=site.policy())
    assert second_opinion(shots, "website") == []
    assert second_opinion(shots, "ui") == []


def test_the_flawed_page_gets_each_of_its_faults_where_it_is(site: Site) -> None:
    desktop, mobile = capture_url(f"{site.url}/flawed", policy=site.policy())
    findings = second_opinion([desktop, mobile], "website")
    for shot in (desktop, mobile):
        faint = _one(findings, "contrast", shot.label)
        assert faint.severity == "a11y" and faint.area is not None
        assert overlap(faint.area, _where(shot, text=FAINT)) > 0.9
        assert "2.3:1" in faint.body and "#aaaaaa on #ffffff" in faint.body
        assert faint.extra["required"] == 4.5
        tiny = _one(findings, "text-size", shot.label)
        assert tiny.area is not None and "10 px" in tiny.body
        assert (
            overlap(tiny.area, _where(shot, text="Terms and conditions apply to every offer."))
            > 0.9
        )
        alt = _one(findings, "axe:image-alt", shot.label)
        assert alt.source == "axe" and alt.area is not None
        assert overlap(alt.area, _where(shot, tag="img")) > 0.9
    targets = _one(findings, "tap-target", "mobile")
    assert targets.area is not None and "16x16 px" in targets.body
    for name in ("Share", "Like"):
        assert overlap(targets.area, _where(mobile, name=name)) == pytest.approx(1.0)
    assert not [f for f in findings if f.rule == "tap-target" and f.label == "desktop"]
    assert not [f for f in findings if f.rule == "above-the-fold"]


def test_a_website_with_nothing_to_click_above_the_fold_is_told_so(site: Site) -> None:
    shots = capture_url(f"{site.url}/no-cta", policy=site.policy())
    findings = second_opinion(shots, "website")
    assert {f.label for f in findings if f.rule == "above-the-fold"} == {"desktop", "mobile"}
    fold = _one(findings, "above-the-fold", "desktop")
    assert fold.area == Area(0.0, 0.0, 1.0, 1.0) and fold.severity == "suggestion"
    # Not a website: the fold is not this review's business.
    assert not [f for f in second_opinion(shots, "ui") if f.rule == "above-the-fold"]


def test_a_clean_email_gets_no_findings_in_light_or_dark(site: Site) -> None:
    assert second_opinion(capture_html(CLEAN_EMAIL, policy=site.policy()), "email") == []


def test_an_email_wider_than_640_px_is_pointed_at_past_the_edge(site: Site) -> None:
    light, dark = capture_html(WIDE_EMAIL, policy=site.policy())
    findings = second_opinion([light, dark], "email")
    wide = _one(findings, "email-width", "light")
    assert light.width >= 820 and "820 px wide" in wide.body
    assert wide.area is not None and wide.area.x + wide.area.w > 0.99
    assert wide.area.w < 0.9  # the table's box, not the whole email
    assert not [f for f in findings if f.rule == "email-width" and f.label == "dark"]


def test_an_email_whose_dark_rendering_loses_its_text_and_logo_is_told_so(site: Site) -> None:
    light, dark = capture_html(DARK_LOSING_EMAIL, policy=site.policy())
    findings = second_opinion([light, dark], "email")
    lost = [f for f in findings if f.rule == "dark-mode"]
    assert {f.label for f in lost} == {"dark"}
    text = [f for f in lost if f.body.startswith("Lost in dark mode")][0]
    logo = [f for f in lost if f.body.startswith("Image lost in dark mode")][0]
    assert text.area is not None and logo.area is not None
    assert (
        overlap(text.area, _where(dark, text="Everything in the shop is half price this weekend."))
        > 0.9
    )
    assert overlap(logo.area, _where(dark, name="Acme")) > 0.9
    assert text.extra["light_ratio"] > 10 and text.extra["ratio"] < 1.5
    # The dark text's own contrast finding says the same thing and is left out.
    assert not [f for f in findings if f.rule == "contrast" and f.label == "dark"]
    # Without the light rendering to compare with, nothing is "lost".
    assert not [f for f in check_shot(dark, "email") if f.rule == "dark-mode"]


def test_a_crowded_slide_is_told_so_and_the_others_are_not(deck: bytes) -> None:
    shots = render_pdf(deck)
    findings = second_opinion(shots, "presentation")
    dense = [f for f in findings if f.rule == "slide-density"]
    assert [f.label for f in dense] == ["page-2"]
    assert dense[0].area is not None and dense[0].area.h > 0.6
    assert dense[0].extra["words"] > 80
    assert [f for f in findings if f.rule != "slide-density"] == []


def test_findings_are_deduplicated_and_capped_per_rule_and_shot(site: Site) -> None:
    shots = capture_url(f"{site.url}/flawed", policy=site.policy())
    twice = second_opinion([*shots, *shots], "website")
    assert len(twice) == len(second_opinion(shots, "website"))
    keys = [(f.rule, f.label, f.area) for f in twice]
    assert len(keys) == len(set(keys))
    counts: dict[tuple[str, str], int] = {}
    for f in twice:
        counts[(f.rule, f.label)] = counts.get((f.rule, f.label), 0) + 1
    assert max(counts.values()) <= PER_RULE


def test_an_unknown_review_type_is_refused(site: Site) -> None:
    with pytest.raises(InvalidInput, match="ui, website, presentation, email"):
        second_opinion([], "newsletter")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("ink", "ground", "expected"),
    [((119, 119, 119), (255, 255, 255), 4.48), ((255, 255, 255), (11, 61, 145), 10.04)],
)
def test_contrast_is_measured_from_the_pixels_of_a_patch(
    ink: tuple[int, int, int], ground: tuple[int, int, int], expected: float
) -> None:
    patch = np.empty((20, 60, 3), np.uint8)
    patch[:] = ground
    patch[6:14, 5:55:3] = ink  # strokes of "text"
    found = measure(patch)
    assert found is not None and found.ratio == pytest.approx(expected, abs=0.01)
    assert found.ink == ink and found.background == ground
    noisy = np.random.default_rng(7).integers(0, 255, (20, 60, 3), dtype=np.uint8)
    assert measure(noisy) is None  # no flat background: nothing to judge
