"""A request that waits for work another process does (a comparison, a capture) holds no thread
of the server's: the service calls run on a few threads (plumbing/offloop.py), and a wait that
slept in one of them would leave every other request queued behind it."""

from __future__ import annotations

import concurrent.futures
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import shot
from tests.server import BACKENDS, running_server
from viewfinder.plumbing.offloop import THREADS

WAIT = 10


@pytest.mark.parametrize("backend", BACKENDS)
def test_requests_waiting_for_comparisons_leave_the_server_free(
    backend: str, tmp_path: Path
) -> None:
    # No worker: the comparisons stay requested, so each waiting request waits its full time.
    with running_server(backend, tmp_path, workers=0) as server:
        headers = {"Authorization": f"Bearer {server.keys['ci']}"}
        with httpx.Client(base_url=f"{server.url}/api/v1", headers=headers, timeout=60) as api:
            ids = []
            for n in range(2):
                pushed = api.post(
                    "/images",
                    params={"name": f"shot-{n}", "context_key": "waits"},
                    content=shot(box=(0, 0, n + 1, n + 1)),
                    headers={"Content-Type": "image/png"},
                )
                assert pushed.status_code == 201, pushed.text
                ids.append(pushed.json()["image_id"])

            def compare_and_wait() -> httpx.Response:
                return api.post(
                    f"/comparisons?wait={WAIT}", json={"base_image_id": ids[0], "image_id": ids[1]}
                )

            with concurrent.futures.ThreadPoolExecutor(THREADS * 2) as pool:
                waiting = [pool.submit(compare_and_wait) for _ in range(THREADS * 2)]
                time.sleep(2)  # time for each waiting request to make its comparison
                with httpx.Client(base_url=f"{server.url}/api/v1", headers=headers) as probe:
                    # A read and an upload are answered while every one of them still waits.
                    assert probe.get("/builds").status_code == 200
                    pushed = probe.post(
                        "/images",
                        params={"name": "during", "context_key": "waits"},
                        content=shot(box=(0, 0, 5, 5)),
                        headers={"Content-Type": "image/png"},
                    )
                    assert pushed.status_code == 201, pushed.text
                    assert not any(f.done() for f in waiting), "a wait ended before its time"
                answers = [f.result() for f in waiting]
            assert {a.status_code for a in answers} == {201}
            assert {a.json()["state"] for a in answers} == {"requested"}
