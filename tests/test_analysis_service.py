"""The change analysis in the review server: stored with each comparison, shown in diff and
story records, ordering a build's stories, the project's ignore_noise setting, and the optional
vision model, here a real HTTP server on loopback that speaks the OpenAI chat API."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import numpy as np
import pytest

from tests.conftest import Keys, make_build
from viewfinder.app import create_app
from viewfinder.errors import Forbidden, InvalidInput
from viewfinder.services import builds, diffs, projects
from viewfinder.services.env import Env


def page() -> np.ndarray:
    rng = np.random.default_rng(3)
    pixels = np.full((120, 160, 3), 250, np.uint8)
    for _ in range(12):  # some "text": short dark bars
        y, x = rng.integers(5, 110), rng.integers(5, 130)
        pixels[y : y + 3, x : x + rng.integers(8, 25)] = rng.integers(20, 90)
    return pixels


def subpixel(pixels: np.ndarray) -> np.ndarray:
    """The page 0.4 px lower, as a renderer blends it: rendering noise only."""
    shifted = pixels.astype(np.float32)
    shifted[1:] = pixels[1:] * 0.6 + pixels[:-1] * 0.4
    return shifted.round().astype(np.uint8)


def vanished(pixels: np.ndarray) -> np.ndarray:
    """A block of content gone, background left: a likely regression."""
    out = pixels.copy()
    out[30:80, 40:120] = 250
    return out


def recoloured(pixels: np.ndarray) -> np.ndarray:
    out = pixels.copy()
    out[40:70, 50:110] = (120, 60, 220)
    return out


def with_blocks(pixels: np.ndarray) -> np.ndarray:
    out = pixels.copy()
    out[30:80, 40:120] = (40, 40, 40)
    out[40:70, 50:110] = (30, 90, 200)
    return out


def test_a_diff_carries_its_analysis_and_a_story_its_verdict(env: Env, keys: Keys) -> None:
    base = with_blocks(page())
    make_build(env, keys.ci, "a" * 40, {"home": base})
    second = make_build(env, keys.ci, "b" * 40, {"home": recoloured(base)})
    story = builds.list_build_stories(env, keys.agent, second, state="changed").items[0]
    assert story.verdict == "likely_intended" and story.summary
    diff = diffs.get_diff(env, keys.agent, story.diff_id or "")
    assert diff.analysis is not None
    assert (diff.analysis.kind, diff.analysis.source) == ("color", "offline")
    assert diff.analysis.changes and diff.analysis.changes[0].kind == "color"


def test_likely_regressions_come_first_among_changed_stories(env: Env, keys: Keys) -> None:
    base = with_blocks(page())
    # Names sort the regression last; its rank puts it first, and paging keeps the order.
    names = [f"a-{i}" for i in range(4)] + ["z-broken"]
    make_build(env, keys.ci, "a" * 40, dict.fromkeys(names, base))
    candidates = {n: recoloured(base) for n in names[:-1]} | {"z-broken": vanished(base)}
    second = make_build(env, keys.ci, "b" * 40, candidates)
    first = builds.list_build_stories(env, keys.agent, second, state="changed", limit=2)
    assert [s.name for s in first.items] == ["z-broken", "a-0"]
    assert first.items[0].verdict == "likely_regression"
    rest = builds.list_build_stories(
        env, keys.agent, second, state="changed", limit=10, cursor=first.next_cursor
    )
    assert [s.name for s in rest.items] == ["a-1", "a-2", "a-3"]


def test_noise_is_unchanged_unless_the_project_says_otherwise(env: Env, keys: Keys) -> None:
    base = page()
    make_build(env, keys.ci, "a" * 40, {"home": base})
    noisy = make_build(env, keys.ci, "b" * 40, {"home": subpixel(base)})
    story = builds.list_build_stories(env, keys.agent, noisy, state="unchanged").items[0]
    diff = diffs.get_diff(env, keys.agent, story.diff_id or "")
    assert diff.changed is False and diff.changed_pixels and diff.analysis
    assert diff.analysis.noise and diff.analysis.verdict == "noise"

    assert projects.update_project(env, keys.admin, ignore_noise=False).ignore_noise is False
    counted = make_build(env, keys.ci, "c" * 40, {"home": subpixel(base)})
    assert builds.get_build(env, keys.agent, build_id=counted).counts.changed == 1


def test_only_an_admin_changes_the_project_settings(env: Env, keys: Keys) -> None:
    with pytest.raises(Forbidden):
        projects.update_project(env, keys.ci, ignore_noise=False)
    with pytest.raises(InvalidInput, match="true or false"):
        projects.update_project(env, keys.admin, ignore_noise="no")  # type: ignore[arg-type]
    assert projects.whoami(env, keys.ci).ignore_noise is True


def test_the_project_settings_over_rest(env: Env, keys: Keys) -> None:
    app = create_app(env=env)
    transport = httpx.ASGITransport(app=app)

    async def go() -> None:
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            admin = {"Authorization": f"Bearer {keys.secrets['admin']}"}
            ci = {"Authorization": f"Bearer {keys.secrets['ci']}"}
            got = await client.patch("/api/v1/project", json={"ignore_noise": False}, headers=admin)
            assert got.status_code == 200 and got.json()["ignore_noise"] is False
            refused = await client.patch("/api/v1/project", json={"ignore_noise": True}, headers=ci)
            assert refused.status_code == 403
            bad = await client.patch("/api/v1/project", json={"ignore_nois": True}, headers=admin)
            assert bad.status_code == 400 and "ignore_nois" in bad.text
            now = await client.get("/api/v1/project", headers=ci)
            assert now.json()["ignore_noise"] is False

    import anyio

    anyio.run(go)


class FakeModel:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 that records what it was sent."""

    def __init__(self, answer: dict[str, Any] | None, status: int = 200) -> None:
        self.requests: list[dict[str, Any]] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                model.requests.append(
                    {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
                )
                reply = {"choices": [{"message": {"content": json.dumps(answer)}}]}
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def regression_model() -> Iterator[FakeModel]:
    model = FakeModel(
        {"verdict": "likely_regression", "confidence": 0.9, "reasoning": "The button is cut."}
    )
    yield model
    model.close()


def use_model(env: Env, url: str) -> None:
    env.settings = env.settings.model_copy(
        update={"vision_url": url, "vision_key": "sk-test", "vision_below": 0.95}
    )


def test_a_vision_model_refines_an_unsure_verdict(
    env: Env, keys: Keys, regression_model: FakeModel
) -> None:
    use_model(env, regression_model.url)
    base = with_blocks(page())
    make_build(env, keys.ci, "a" * 40, {"home": base})
    second = make_build(env, keys.ci, "b" * 40, {"home": recoloured(base)})
    story = builds.list_build_stories(env, keys.agent, second, state="changed").items[0]
    diff = diffs.get_diff(env, keys.agent, story.diff_id or "")
    assert diff.analysis is not None
    assert (diff.analysis.source, diff.analysis.verdict) == ("vision", "likely_regression")
    assert "The button is cut." in diff.analysis.reasoning
    assert story.verdict == "likely_regression"
    # Asked once, with the key, the model's name and the crop of the change as a PNG.
    [sent] = regression_model.requests
    assert sent["path"] == "/v1/chat/completions" and sent["auth"] == "Bearer sk-test"
    assert sent["body"]["model"] == env.settings.vision_model
    image = sent["body"]["messages"][1]["content"][1]["image_url"]["url"]
    assert image.startswith("data:image/png;base64,")


def test_a_sure_verdict_is_not_sent_to_the_model(
    env: Env, keys: Keys, regression_model: FakeModel
) -> None:
    use_model(env, regression_model.url)
    env.settings = env.settings.model_copy(update={"vision_below": 0.1})
    base = with_blocks(page())
    make_build(env, keys.ci, "a" * 40, {"home": base})
    make_build(env, keys.ci, "b" * 40, {"home": recoloured(base)})
    assert regression_model.requests == []


@pytest.mark.parametrize(
    ("answer", "status"),
    [({"verdict": "maybe"}, 200), ({"verdict": "noise"}, 500), (None, 200)],
)
def test_a_model_without_a_usable_answer_leaves_the_offline_analysis(
    env: Env, keys: Keys, answer: dict[str, Any] | None, status: int
) -> None:
    model = FakeModel(answer, status)
    try:
        use_model(env, model.url)
        base = with_blocks(page())
        make_build(env, keys.ci, "a" * 40, {"home": base})
        second = make_build(env, keys.ci, "b" * 40, {"home": recoloured(base)})
        story = builds.list_build_stories(env, keys.agent, second, state="changed").items[0]
        diff = diffs.get_diff(env, keys.agent, story.diff_id or "")
        assert diff.analysis is not None and len(model.requests) == 1
        assert (diff.analysis.source, diff.analysis.verdict) == ("offline", "likely_intended")
    finally:
        model.close()


def test_an_unreachable_model_leaves_the_offline_analysis(env: Env, keys: Keys) -> None:
    model = FakeModel(None)
    model.close()  # nothing listens there any more
    use_model(env, model.url)
    env.settings = env.settings.model_copy(update={"vision_timeout": 2.0})
    base = with_blocks(page())
    make_build(env, keys.ci, "a" * 40, {"home": base})
    second = make_build(env, keys.ci, "b" * 40, {"home": recoloured(base)})
    assert builds.get_build(env, keys.agent, build_id=second).counts.changed == 1
