"""Killing the server outright in the middle of an upload loses nothing it acknowledged, and a
restart finishes every comparison that was pending."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import shot
from tests.server import Server, _database, free_port, launch

# Enough that the kill lands mid-upload with four uploads in flight, and a third are through.
STORIES = 80
pytestmark = pytest.mark.parametrize("backend", ["sqlite", "postgresql"])


def story(i: int, moved: bool) -> bytes:
    x, y = (i * 7) % 50, (i * 3) % 36
    return shot(box=(x + 2 * moved, y, x + 10 + 2 * moved, y + 8))


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def wait_until(predicate: object, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def stories_of(client: httpx.Client, build_id: str, state: str) -> list[dict[str, object]]:
    """Every story of the build in that state, following the cursors."""
    params: dict[str, object] = {"state": state, "limit": 100}
    page = client.get(f"/builds/{build_id}/stories", params=params).json()
    items = list(page["items"])
    while page["next_cursor"]:
        params["cursor"] = page["next_cursor"]
        page = client.get(f"/builds/{build_id}/stories", params=params).json()
        items += page["items"]
    return items


def upload_build(client: httpx.Client, sha: str, moved: bool) -> str:
    build_id: str = client.post("/builds", json={"commit_sha": sha}).json()["id"]
    for i in range(STORIES):
        r = client.put(
            f"/builds/{build_id}/stories", params={"name": f"s{i:03}"}, content=story(i, moved)
        )
        assert r.status_code == 201, r.text
    client.post(f"/builds/{build_id}/finalize").raise_for_status()
    return build_id


def test_a_killed_server_loses_nothing_acknowledged(backend: str, tmp_path: Path) -> None:
    with _database(backend) as database_url:
        server = Server(f"http://127.0.0.1:{free_port()}", tmp_path / "data", database_url)
        proc = launch(server, tmp_path, "first")
        headers = {"Authorization": f"Bearer {server.keys['ci']}"}
        client = httpx.Client(base_url=f"{server.url}/api/v1", headers=headers, timeout=30)
        upload_build(client, "aaaa", moved=False)
        build_id = client.post("/builds", json={"commit_sha": "bbbb"}).json()["id"]

        acknowledged: set[int] = set()
        lock = threading.Lock()

        def uploader(part: int) -> None:
            for i in range(part, STORIES, 4):
                try:
                    r = client.put(
                        f"/builds/{build_id}/stories",
                        params={"name": f"s{i:03}"},
                        content=story(i, moved=True),
                    )
                except httpx.TransportError:
                    return
                if r.status_code == 201:
                    with lock:
                        acknowledged.add(i)

        threads = [threading.Thread(target=uploader, args=(p,)) for p in range(4)]
        for t in threads:
            t.start()
        wait_until(lambda: len(acknowledged) >= STORIES // 3, "a third of the uploads")
        workers = children(proc.pid)
        proc.kill()  # SIGKILL: no shutdown code runs
        proc.wait()
        for t in threads:
            t.join(30)
        assert 0 < len(acknowledged) < STORIES
        # The workers notice their server is gone and stop on their own.
        wait_until(lambda: not any(Path(f"/proc/{w}").exists() for w in workers), "workers")

        proc = launch(server, tmp_path, "second")
        try:
            stored = [
                story
                for state in ("pending", "changed", "failed")
                for story in stories_of(client, build_id, state)
            ]
            assert {f"s{i:03}" for i in acknowledged} <= {st["name"] for st in stored}
            # Nothing half written: every stored story's image is whole and readable.
            for st in stored:
                image = client.get(f"/stories/{st['id']}/image")
                assert image.status_code == 200 and image.content.endswith(b"IEND\xaeB`\x82")
            # The client retries everything; acknowledged stories are no-ops the second time.
            for i in range(STORIES):
                r = client.put(
                    f"/builds/{build_id}/stories",
                    params={"name": f"s{i:03}"},
                    content=story(i, moved=True),
                )
                assert r.status_code == 201, r.text
            client.post(f"/builds/{build_id}/finalize").raise_for_status()
            wait_until(
                lambda: client.get(f"/builds/{build_id}").json()["status"] == "done",
                "the build to finish",
            )
            counts = client.get(f"/builds/{build_id}").json()["counts"]
            assert counts["changed"] == STORIES and counts["pending"] == 0, counts
        finally:
            proc.kill()
            proc.wait()
            client.close()


def test_the_server_survives_a_worker_crash(backend: str, tmp_path: Path) -> None:
    with _database(backend) as database_url:
        server = Server(f"http://127.0.0.1:{free_port()}", tmp_path / "data", database_url)
        proc = launch(server, tmp_path)
        headers = {"Authorization": f"Bearer {server.keys['ci']}"}
        try:
            with httpx.Client(base_url=f"{server.url}/api/v1", headers=headers, timeout=30) as c:
                wait_until(lambda: children(proc.pid), "a worker")
                (worker,) = children(proc.pid)
                os.kill(worker, signal.SIGKILL)
                wait_until(
                    lambda: children(proc.pid) and worker not in children(proc.pid), "a new worker"
                )
                params = {"name": "home", "context_key": "x", "compare": True}
                c.post("/images", params=params, content=shot()).raise_for_status()
                pushed = c.post("/images", params=params, content=shot(box=(0, 0, 5, 5)))
                assert pushed.json()["diff"]["outcome"] == "changed", pushed.text
        finally:
            proc.kill()
            proc.wait()
