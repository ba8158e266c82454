"""A second opinion from a vision model, for the pairs the offline analysis is unsure about.

Off by default. With VIEWFINDER_VISION_URL set, the before/after crop of the largest changed
region goes to that OpenAI-compatible endpoint (`POST {url}/chat/completions`), which answers
with a verdict. Any failure (no answer, bad JSON, an unknown verdict) leaves the offline
analysis as it was: the model can refine a verdict, never block a comparison.
"""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import httpx

from viewfinder.settings import Settings

log = logging.getLogger("viewfinder.vision")
VERDICTS = ("noise", "likely_intended", "likely_regression")
PROMPT = (
    "You review visual changes of a web page for a pull request. The image shows the same area "
    "before (left) and after (right) a code change. Decide whether the change looks like "
    "rendering noise, an intended change, or a regression (broken layout, overlapping or "
    "clipped content, missing content, illegible text). Answer with JSON only: "
    '{"verdict": "noise" | "likely_intended" | "likely_regression", "confidence": 0..1, '
    '"reasoning": "one or two sentences"}.'
)


def wanted(settings: Settings, analysis: dict[str, Any]) -> bool:
    """Whether to ask: a model is configured and the offline analysis is unsure."""
    return bool(settings.vision_url) and float(analysis.get("confidence", 1)) < (
        settings.vision_below
    )


def consult(
    settings: Settings, side_by_side_png: bytes, analysis: dict[str, Any]
) -> dict[str, Any]:
    """The analysis, refined by the model's verdict when it gives a usable one."""
    url = (settings.vision_url or "").rstrip("/") + "/chat/completions"
    image = "data:image/png;base64," + base64.b64encode(side_by_side_png).decode()
    body = {
        "model": settings.vision_model,
        "temperature": 0,
        "response_format": {"type": "json_object"},
        "messages": [
            {"role": "system", "content": PROMPT},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": f"Offline analysis: {analysis.get('summary', '')}"},
                    {"type": "image_url", "image_url": {"url": image}},
                ],
            },
        ],
    }
    headers = {"Authorization": f"Bearer {settings.vision_key}"} if settings.vision_key else {}
    try:
        response = httpx.post(url, json=body, headers=headers, timeout=settings.vision_timeout)
        response.raise_for_status()
        content = response.json()["choices"][0]["message"]["content"]
        answer = json.loads(content)
        verdict = answer["verdict"]
        if verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {verdict!r}")
        confidence = min(max(float(answer.get("confidence", 0.7)), 0.0), 1.0)
        reasoning = str(answer.get("reasoning", ""))[:1000]
    except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as exc:
        log.warning("the vision model at %s gave no usable answer: %s", url, exc)
        return analysis
    return analysis | {
        "verdict": verdict,
        "confidence": confidence,
        "reasoning": f"{analysis.get('reasoning', '')} A vision model ({settings.vision_model}) "
        f"judged it {verdict.replace('_', ' ')}: {reasoning}".strip(),
        "source": "vision",
    }


DESIGN_PROMPT = (
    "You are a design reviewer. The image is one screenshot ({label}) of a {kind} under review. "
    "Point out at most {limit} problems a careful designer would flag (hierarchy, spacing, "
    "alignment, contrast, clipped or overlapping content, unclear calls to action). Answer with "
    'JSON only: {{"findings": [{{"severity": "suggestion" | "a11y" | "polish", "body": "one '
    'sentence", "area": {{"x": 0..1, "y": 0..1, "w": 0..1, "h": 0..1}} or null}}]}}, areas as '
    "fractions of the image's width and height."
)
DESIGN_LIMIT = 5
SEVERITIES = ("suggestion", "a11y", "polish")


def design_findings(
    settings: Settings, png: bytes, *, review_type: str, label: str
) -> list[dict[str, Any]]:
    """A vision model's design hints on one screenshot of a checkup: ``{severity, body,
    area}`` each (area None or fractions 0-1). Empty when no model is set or its answer is not
    usable: the model adds hints, it never holds a review back."""
    if not settings.vision_url:
        return []
    url = settings.vision_url.rstrip("/") + "/chat/completions"
    image = "data:image/png;base64," + base64.b64encode(png).decode()
    prompt = DESIGN_PROMPT.format(label=label, kind=review_type, limit=DESIGN_LIMIT)
    body = {
        "model": settings.vision_model,
        "temperature": 0,
        "response_format": {"type": "json_object"},
        "messages": [
            {"role": "system", "content": prompt},
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": image}}]},
        ],
    }
    headers = {"Authorization": f"Bearer {settings.vision_key}"} if settings.vision_key else {}
    try:
        response = httpx.post(url, json=body, headers=headers, timeout=settings.vision_timeout)
        response.raise_for_status()
        answer = json.loads(response.json()["choices"][0]["message"]["content"])
        found = []
        for item in answer["findings"][:DESIGN_LIMIT]:
            severity = item.get("severity") if item.get("severity") in SEVERITIES else "suggestion"
            text = str(item["body"]).strip()[:1000]
            area = item.get("area")
            if isinstance(area, dict):
                x, y, w, h = (min(max(float(area[k]), 0.0), 1.0) for k in ("x", "y", "w", "h"))
                area = {"x": x, "y": y, "w": min(w, 1 - x), "h": min(h, 1 - y)}
                if area["w"] < 0.01 or area["h"] < 0.01:
                    area = None
            else:
                area = None
            if text:
                found.append({"severity": severity, "body": text, "area": area})
    except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        log.warning("the vision model at %s gave no usable design hints: %s", url, exc)
        return []
    return found
