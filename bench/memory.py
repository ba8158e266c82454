"""Memory benchmark: what serving pieces of a huge screenshot costs the API process.

A real `viewfinder serve` (SQLite) gets a 10000x10000 screenshot (100 million pixels, the
largest the default limits accept) as a build's story twice, the second time changed, so that
it has a diff. Then, in three rounds, six clients at once ask for: a 500-row page of the
changed image (REST ``/diffs/{id}/image?which=after&offset=...``), a before/after crop of the
change (``which=before_after``), and the story's dashboard thumbnail. Before each round the
API process's peak resident memory is reset (``/proc/PID/clear_refs``); after it, the peak is
read (``VmHWM``). A whole decoded 10000x10000 RGBA image is 400 MB, so a peak under that shows
no request decoded the whole image.

Run from the repository root with ``python -m bench.memory``. Ends with one line:
``memory: 6 concurrent on a 10000x10000 screenshot: pages X MB, crops Y MB, thumbnails Z MB
(peak of the API process)``.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np

from tests.server import Server, free_port, launch, stop
from viewfinder.imaging import png

SIDE = 10_000
CLIENTS = 6


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def huge(changed: bool) -> bytes:
    """A 10000x10000 page of stripes (small as a PNG), with a block in it when ``changed``."""
    pixels = np.full((SIDE, SIDE, 3), 250, np.uint8)
    pixels[::40] = (40, 40, 40)
    if changed:
        pixels[5000:5200, 3000:3400] = (200, 30, 30)
    return png.encode(pixels, level=6)


def peak_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"VmHWM:\s+(\d+) kB", status)
    assert found is not None
    return int(found.group(1)) / 1024


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def upload(api: httpx.Client, sha: str, data: bytes) -> str:
    build = api.post("/builds", json={"commit_sha": sha}).json()["id"]
    put = api.put(
        f"/builds/{build}/stories",
        params={"name": "huge"},
        content=data,
        headers={"Content-Type": "image/png"},
    )
    put.raise_for_status()
    api.post(f"/builds/{build}/finalize").raise_for_status()
    return str(build)


def wait_done(api: httpx.Client, build: str) -> dict[str, object]:
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        record = api.get(f"/builds/{build}").json()
        if record["status"] == "done":
            return dict(record)
        time.sleep(0.5)
    raise RuntimeError(f"build {build} was not compared within 10 minutes")


def signed_in(server: Server) -> httpx.Client:
    web = httpx.Client(base_url=server.url, timeout=300)
    form = web.get("/login").text
    token = re.search(r'name="csrf" value="([^"]+)"', form)
    assert token is not None
    done = web.post("/login", data={"key": server.keys["admin"], "csrf": token.group(1)})
    assert done.status_code in (200, 303), done.text
    return web


def round_of(pid: int, fetch: list[tuple[httpx.Client, str]]) -> float:
    reset_peak(pid)
    with ThreadPoolExecutor(CLIENTS) as pool:
        answers = list(pool.map(lambda job: job[0].get(job[1]), fetch))
    for answer in answers:
        answer.raise_for_status()
    return peak_mb(pid)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="vf-memory-") as tmp:
        root = Path(tmp)
        server = Server(f"http://127.0.0.1:{free_port()}", root / "data", None)
        proc = launch(server, root)
        try:
            headers = {"Authorization": f"Bearer {server.keys['admin']}"}
            api = httpx.Client(base_url=f"{server.url}/api/v1", headers=headers, timeout=300)
            log("uploading a 10000x10000 screenshot twice and comparing them ...")
            wait_done(api, upload(api, "aaaa1111", huge(False)))
            second = upload(api, "bbbb2222", huge(True))
            wait_done(api, second)
            [story] = api.get(f"/builds/{second}/stories", params={"state": "changed"}).json()[
                "items"
            ]
            diff = story["diff_id"]
            web = signed_in(server)
            idle = peak_mb(proc.pid)
            pages = round_of(
                proc.pid,
                [
                    (api, f"/diffs/{diff}/image?which=after&offset={1000 * i}&height=500")
                    for i in range(CLIENTS)
                ],
            )
            crops = round_of(proc.pid, [(api, f"/diffs/{diff}/image?which=before_after")] * CLIENTS)
            thumbs = round_of(proc.pid, [(web, f"/ui/thumbs/stories/{story['id']}")] * CLIENTS)
        finally:
            stop(proc)
    print(f"API process peak before the rounds (upload and start-up): {idle:.0f} MB")
    print(f"{CLIENTS} concurrent 500-row pages:    peak {pages:.0f} MB")
    print(f"{CLIENTS} concurrent before/after crops: peak {crops:.0f} MB")
    print(f"{CLIENTS} concurrent thumbnails:      peak {thumbs:.0f} MB")
    print(
        f"memory: {CLIENTS} concurrent on a 10000x10000 screenshot: pages {pages:.0f} MB, "
        f"crops {crops:.0f} MB, thumbnails {thumbs:.0f} MB (peak of the API process)"
    )


if __name__ == "__main__":
    main()
