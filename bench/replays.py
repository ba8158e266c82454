"""How fast and how deterministic session replays are, as a server runs them:

- ``viewfinder serve --workers 2`` on SQLite; 10 sessions of 10-15 steps on the generated
  shopping app (tests/replay_app.py), sent to the ingest as recorder.js sends them; two builds
  (the app and a variant whose button changed) uploaded as zips and registered as deployments;
- one test run of the changed build against the first: every session replayed on both (20
  replays, in parallel on the two workers), each screenshot pair compared, differing head
  screenshots taken again to tell flakes. Figures: seconds per replayed step (the replays'
  own time, from the server's records, over their steps), the run's wall time from trigger to
  complete, and its flakes;
- determinism: one session replayed 10 times on the same build in this process's warm
  browser; identical re-runs count the replays whose every screenshot is byte-identical to
  the first one's.

Run alone with ``python -m bench.replays``; prints one line:

    replays: X s/step, run Y s for N steps, identical re-runs K/K, flakes 0
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import httpx

from bench.vfserver import VIEWFINDER, Server, clean_environ, running_server
from tests.replay_app import serving, shopping_json, shopping_session, write_app
from viewfinder.replay import replay

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / ".results"
SESSIONS = 10
RERUNS = 10
BASE_SHA, HEAD_SHA = "b" * 40, "c" * 40


def _zip(root: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(root).as_posix())
    return buffer.getvalue()


def _deploy(http: httpx.Client, root: Path, sha: str) -> str:
    ticket = http.post("/api/v1/deployments/uploads").json()
    http.put(ticket["upload_url"], content=_zip(root)).raise_for_status()
    made = http.post(
        "/api/v1/deployments", json={"upload_id": ticket["upload_id"], "commit_sha": sha}
    )
    made.raise_for_status()
    return str(made.json()["id"])


def _record_key(server: Server) -> str:
    made = subprocess.run(
        [VIEWFINDER, "keys", "create", "--data-dir", str(server.root / "data"), "--role", "record"]
        + ["--label", "bench", "--json"],
        capture_output=True,
        text=True,
        check=True,
        env=clean_environ(),
    )
    return str(json.loads(made.stdout)["key"])


def _send_sessions(server: Server) -> None:
    key = _record_key(server)
    for n in range(SESSIONS):
        whole = shopping_json(extra_steps=2 + n % 6)  # 10 to 15 steps
        batch = {
            "session": f"bench-session-{n:04d}",
            "seq": 0,
            "start": {k: whole[k] for k in ("startUrl", "viewport", "userAgent", "storage")},
            **{k: whole[k] for k in ("events", "network", "urls")},
        }
        httpx.post(
            f"{server.url}/api/v1/sessions/ingest",
            content=json.dumps(batch),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "text/plain"},
            timeout=30,
        ).raise_for_status()


def _run(server: Server, tmp: Path) -> dict[str, Any]:
    ci = {"Authorization": f"Bearer {server.keys['ci']}"}
    with httpx.Client(base_url=server.url, headers=ci, timeout=60) as http:
        _deploy(http, write_app(tmp / "base"), BASE_SHA)
        head = _deploy(http, write_app(tmp / "head", "regressed"), HEAD_SHA)
        started = time.perf_counter()
        run = http.post("/api/v1/test-runs", json={"deployment_id": head, "base_sha": BASE_SHA})
        run.raise_for_status()
        run_id = run.json()["testRunId"]
        deadline = time.monotonic() + 1800
        while True:
            state = http.get(f"/api/v1/test-runs/{run_id}").json()
            if state["status"] != "processing" or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        wall = time.perf_counter() - started
        if state["status"] != "complete":
            raise RuntimeError(f"the run did not complete: {state}")
        counts = http.get(f"/api/v1/test-runs/{run_id}/counts").json()
    with sqlite3.connect(server.root / "data" / "viewfinder.db") as db:
        seconds, steps, replays = db.execute(
            "SELECT SUM(seconds), SUM(steps), COUNT(*) FROM replays WHERE test_run_id = ?",
            (run_id,),
        ).fetchone()
    return {
        "wall_seconds": round(wall, 2),
        "replays": replays,
        "steps": steps,
        "seconds_per_step": round(seconds / steps, 3),
        "flakes": counts["outcomes"]["flake"],
        "outcomes": counts["outcomes"],
    }


def _determinism(tmp: Path) -> tuple[int, float]:
    """Identical re-runs of one 13-step session (of RERUNS), and this process's s/step."""
    recording = shopping_session(extra_steps=5)
    with serving(write_app(tmp / "same")) as url:
        first = replay(recording, url)
        same = 0
        started = time.perf_counter()
        for _ in range(RERUNS):
            again = replay(recording, url)
            same += [s.png for s in again.shots] == [s.png for s in first.shots]
        per_step = (time.perf_counter() - started) / (RERUNS * first.steps)
    return same, per_step


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="vf-bench-replays-") as temp:
        tmp = Path(temp)
        (tmp / "server").mkdir()
        with running_server(tmp / "server", workers=2) as server:
            _send_sessions(server)
            figures = _run(server, tmp)
        identical, local_per_step = _determinism(tmp)
    figures["identical_reruns"] = identical
    figures["reruns"] = RERUNS
    figures["in_process_seconds_per_step"] = round(local_per_step, 3)
    figures["load_average"] = os.getloadavg()[0]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "replays.json").write_text(json.dumps(figures, indent=2))
    print(
        f"replays: {figures['seconds_per_step']:.2f} s/step, run {figures['wall_seconds']:.1f} s "
        f"for {figures['steps']} steps, identical re-runs {identical}/{RERUNS}, "
        f"flakes {figures['flakes']}"
    )


if __name__ == "__main__":
    main()
