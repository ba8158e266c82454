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
