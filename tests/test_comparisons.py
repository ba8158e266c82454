"""Comparisons of two stored images with no build and no baseline: computed by a worker,
owned by whoever asked, visible only in their project, and leaving every baseline alone."""

from __future__ import annotations

import io

import pytest
from fastapi.testclient import TestClient
from PIL import Image as PILImage

from tests.conftest import Keys, drain, shot
from viewfinder.app import create_app
from viewfinder.errors import InvalidInput, NotFound
from viewfinder.services import baselines, comparisons, diffs, pushes
from viewfinder.services.env import Env


def stored(env: Env, keys: Keys, data: bytes, name: str) -> str:
    """An image kept in the project without comparing it with anything."""
    return pushes.push(env, keys.ci, data, name=name, context_key="loose").image_id


def test_two_stored_images_are_compared_without_a_build_or_a_baseline(env: Env, keys: Keys) -> None:
    base = stored(env, keys, shot(), "pass-1")
    head = stored(env, keys, shot(box=(4, 4, 20, 12)), "pass-2")
    requested = comparisons.compare_images(env, keys.ci, base, head)
    assert (requested.state, requested.owner_kind, requested.outcome) == (
        "requested",
        "images",
        None,
    )
    assert drain(env) == 1
    done = comparisons.get_comparison(env, keys.agent, requested.id)
    assert (done.state, done.outcome, done.changed) == ("done", "changed", True)
    assert done.changed_pixels == 16 * 8 and [(r.x, r.y) for r in done.regions] == [(4, 4)]
    assert done.analysis is not None and done.urls.diff and done.urls.base and done.urls.candidate
    assert done.completed_at is not None and done.completed_at >= done.requested_at
    assert baselines.list_baselines(env, keys.agent).items == [], "no baseline was made"
    with pytest.raises(NotFound):
        diffs.get_diff(env, keys.agent, done.id)  # a comparison is not a diff to review


def test_identical_bytes_are_settled_at_once(env: Env, keys: Keys) -> None:
    first = stored(env, keys, shot(), "a")
    second = stored(env, keys, shot(), "b")
    record = comparisons.compare_images(env, keys.ci, first, second, max_diff_ratio=0.5)
    assert (record.state, record.identical, record.diff_ratio) == ("done", True, 0.0)
    assert drain(env) == 0


def test_what_cannot_be_compared_is_refused(env: Env, keys: Keys, other: Keys) -> None:
    png = stored(env, keys, shot(), "a")
    jpeg = io.BytesIO()
    PILImage.new("RGB", (8, 8), "white").save(jpeg, "JPEG")
    photo = stored(env, keys, jpeg.getvalue(), "photo")
    with pytest.raises(InvalidInput, match="only PNGs are compared"):
        comparisons.compare_images(env, keys.ci, png, photo)
    with pytest.raises(NotFound, match="no image"):
        comparisons.compare_images(env, other.ci, png, png)
    with pytest.raises(InvalidInput, match="max_diff_ratio"):
        comparisons.compare_images(env, keys.ci, png, png, max_diff_ratio=2)
    head = stored(env, keys, shot(box=(0, 0, 2, 2)), "b")
    made = comparisons.compare_images(env, keys.ci, png, head)
    with pytest.raises(NotFound, match="no comparison"):
        comparisons.get_comparison(env, other.agent, made.id)


def test_the_rest_api_compares_two_images_and_waits_for_the_result(env: Env, keys: Keys) -> None:
    base = stored(env, keys, shot(), "a")
    head = stored(env, keys, shot(box=(1, 1, 3, 3)), "b")
    headers = {"Authorization": f"Bearer {keys.secrets['ci']}"}
    with TestClient(create_app(env=env, workers=1)) as client:
        response = client.post(
            "/api/v1/comparisons?wait=20",
            json={"base_image_id": base, "image_id": head},
            headers=headers,
        )
        assert response.status_code == 201, response.text
        body = response.json()
        assert (body["state"], body["outcome"], body["changed_pixels"]) == ("done", "changed", 4)
        again = client.get(f"/api/v1/comparisons/{body['id']}", headers=headers)
        assert again.json()["id"] == body["id"]
        missing = client.post(
            "/api/v1/comparisons",
            json={"base_image_id": "img_x", "image_id": head},
            headers=headers,
        )
        assert missing.status_code == 404
        assert missing.json()["error"]["details"] == {"image_id": "img_x"}
