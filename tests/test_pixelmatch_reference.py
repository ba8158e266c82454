"""The pixel classifier against pixelmatch 7.2.0 itself, run in node: random small pairs whose
neighbourhoods hit every branch of the anti-aliasing test (few colours, so that neighbours
repeat; semi-transparent pixels) and whose colour deltas fall on both sides of the threshold
(colours nudged by a few levels). pixelmatch() must give
pixelmatch's count and diff image, and compare() on the same pixels as opaque RGB its count."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from viewfinder.imaging import compare, png
from viewfinder.imaging.pixelmatch import pixelmatch

PIXELMATCH = Path(__file__).parent / ".npm" / "node_modules" / "pixelmatch" / "index.js"
CASES = 240
# Runs every case through pixelmatch with a zero-filled output, as pngjs's new PNG() starts.
NODE_RUNNER = """
import { readFileSync } from "node:fs";
const { default: pixelmatch } = await import(process.argv[1]);
const cases = JSON.parse(readFileSync(0, "utf8"));
const answers = cases.map((c) => {
  const a = Buffer.from(c.a, "base64"), b = Buffer.from(c.b, "base64");
  const out = Buffer.alloc(a.length);
  const count = pixelmatch(a, b, out, c.width, c.height, c.options);
  return { count, diff: out.toString("base64") };
});
process.stdout.write(JSON.stringify(answers));
"""


def random_pair(rng: np.random.Generator, opaque: bool) -> tuple[np.ndarray, np.ndarray]:
    h, w = (int(v) for v in rng.integers(1, 20, 2))
    palette = rng.integers(0, 256, (int(rng.integers(2, 6)), 4)).astype(np.uint8)
    if opaque:
        palette[:, 3] = 255
    else:
        palette[:, 3] = rng.choice([0, 64, 200, 255], len(palette))
    a = palette[rng.integers(0, len(palette), (h, w))]
    b = a.copy()
    repainted = rng.random((h, w)) < rng.random()
    b[repainted] = palette[rng.integers(0, len(palette), int(repainted.sum()))]
    if rng.random() < 0.5:  # nudged colours, from a level or two to either side of threshold 0.1
        reach = int(rng.choice([2, 12, 24]))
        nudged = b.astype(np.int16) + rng.integers(-reach, reach + 1, b.shape)
        b = np.clip(nudged, 0, 255).astype(np.uint8)
        if opaque:
            b[..., 3] = 255
    return np.ascontiguousarray(a), np.ascontiguousarray(b)


def random_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(7)
    cases = []
    for n in range(CASES):
        a, b = random_pair(rng, opaque=n % 3 != 0)
        options = {
            "threshold": float(rng.choice([0.0, 0.05, 0.1, 0.3])),
            "includeAA": bool(n % 5 == 0),
            "checkerboard": bool(n % 2 == 0),
            "diffColorAlt": [0, 255, 0],
        }
        cases.append({"a": a, "b": b, "options": options})
    return cases


@pytest.fixture(scope="module")
def answers() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    if not PIXELMATCH.exists():
        pytest.fail(
            f"pixelmatch is not installed in {PIXELMATCH.parents[2]}: run `make clients` (or "
            "`make test`, which installs it from tests/npm/package.json)"
        )
    node = shutil.which("node")
    assert node, "node is needed to run pixelmatch: install Node.js"
    cases = random_cases()
    request = [
        {
            "a": base64.b64encode(c["a"].tobytes()).decode(),
            "b": base64.b64encode(c["b"].tobytes()).decode(),
            "width": c["a"].shape[1],
            "height": c["a"].shape[0],
            "options": c["options"],
        }
        for c in cases
    ]
    done = subprocess.run(
        [node, "--input-type=module", "-e", NODE_RUNNER, PIXELMATCH.as_uri()],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return cases, json.loads(done.stdout)


def test_counts_and_diff_images_are_pixelmatchs(answers: Any) -> None:
    cases, expected = answers
    flagged = 0
    for n, (case, want) in enumerate(zip(cases, expected, strict=True)):
        o = case["options"]
        output = np.zeros_like(case["a"])
        count = pixelmatch(
            case["a"],
            case["b"],
            output,
            threshold=o["threshold"],
            include_aa=o["includeAA"],
            checkerboard=o["checkerboard"],
            diff_color_alt=tuple(o["diffColorAlt"]),
        )
        assert count == want["count"], f"case {n}: {count} pixels, pixelmatch {want['count']}"
        diff = np.frombuffer(base64.b64decode(want["diff"]), np.uint8).reshape(output.shape)
        assert np.array_equal(output, diff), f"case {n}: the diff image differs"
        flagged += count
    assert flagged > 0  # the cases are not all alike


def test_compare_counts_opaque_rgb_pixels_as_pixelmatch(answers: Any) -> None:
    cases, expected = answers
    checked = 0
    for n, (case, want) in enumerate(zip(cases, expected, strict=True)):
        o = case["options"]
        if not (case["a"][..., 3] == 255).all() or not (case["b"][..., 3] == 255).all():
            continue
        result = compare(
            png.encode(case["a"][..., :3].copy()),
            png.encode(case["b"][..., :3].copy()),
            threshold=o["threshold"],
            include_aa=o["includeAA"],
        )
        assert result.changed_pixels == want["count"], f"case {n}"
        checked += 1
    assert checked > CASES // 2
