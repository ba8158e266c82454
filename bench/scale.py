"""Scale-out benchmark: Viewfinder as several processes on PostgreSQL and an S3 bucket (moto's
server on loopback), the way an operator runs it.

1. Comparisons per second on one build with 1, 2 and 4 `viewfinder worker` processes: a build
   of changed stories is uploaded while no worker runs, then the workers start and are timed
   from the moment all of them answer their health check until the build is done.
2. The job queue alone: jobs claimed and finished per second by 4 threads, and the claim's
   latency, to compare with what one comparison costs (see the README's multi-node section).
3. A mixed load over two API nodes behind a round-robin load balancer for ``--seconds``
   (60 by default): readers list builds, read a build and a diff; writers push screenshots.
   Latency percentiles and errors.

Run from the repository root with ``python -m bench.scale``. Ends with one line:
``scale: 1w X/s, 2w Y/s, 4w Z/s; two nodes p99 P ms, errors E``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psycopg

from tests.cluster import Balancer, Cluster, cluster, s3_server
from viewfinder.imaging import png

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / ".results"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def page(seed: int, changed: int) -> bytes:
    """A 640x400 screenshot-like image: blocks of 'text' on a pale page; ``changed`` moves one."""
    rng = np.random.default_rng(seed)
    pixels = np.full((400, 640, 3), 248, np.uint8)
    for row in range(12):
        y = 20 + row * 30
        width = int(rng.integers(200, 600))
        pixels[y : y + 10, 20 : 20 + width] = (60, 60, 70)
    if changed:
        y = 20 + (changed % 12) * 30
        pixels[y : y + 10, 20:300] = (200, 40, 40)
    return png.encode(pixels, level=1)


def api(cluster_: Cluster, url: str, role: str = "ci") -> httpx.Client:
    return httpx.Client(
        base_url=f"{url}/api/v1",
        headers={"Authorization": f"Bearer {cluster_.keys[role]}"},
        timeout=60,
    )


def upload_build(client: httpx.Client, sha: str, stories: int, changed: int) -> str:
    build = client.post("/builds", json={"commit_sha": sha}).json()["id"]
    for start in range(0, stories, 50):
        files = [
            ("file", (f"s{i:03}", page(i, changed), "image/png"))
            for i in range(start, min(start + 50, stories))
        ]
        answer = client.post(f"/builds/{build}/stories", files=files)
        answer.raise_for_status()
    client.post(f"/builds/{build}/finalize").raise_for_status()
    return str(build)


def wait_done(client: httpx.Client, build: str, timeout: float = 600) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        record: dict[str, Any] = client.get(f"/builds/{build}", params={"limit": 1}).json()
        if record["status"] == "done":
            return record
        time.sleep(0.05)
    raise RuntimeError(f"build {build} not done in {timeout} s")


def done_count(c: Cluster, build: str) -> int:
    with psycopg.connect(c.database_url.replace("+psycopg", "")) as conn:
        row = conn.execute(
            "SELECT count(*) FROM comparisons WHERE build_id = %s AND state = 'done' "
            "AND NOT registered",
            (build,),
        ).fetchone()
        return int(row[0]) if row else 0


def deadlocks(c: Cluster) -> int:
    with psycopg.connect(c.database_url.replace("+psycopg", "")) as conn:
        row = conn.execute(
            "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
        return int(row[0]) if row else 0


def comparisons_per_second(c: Cluster, url: str, workers: int, stories: int, rnd: int) -> float:
    with api(c, url) as client:
        build = upload_build(client, f"{workers:02x}{rnd:02x}cafe", stories, changed=rnd + 1)
        names = [f"bench-w{workers}-{rnd}-{n}" for n in range(workers)]
        ports = [c.start_worker_with_health(name) for name in names]
        start = time.monotonic()
        while True:
            up = 0
            for port in ports:
                try:
                    up += httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).is_success
                except httpx.TransportError:
                    pass
            if up == len(ports):
                break
            if time.monotonic() - start > 60:
                raise RuntimeError("workers did not come up")
            time.sleep(0.02)
        t0, before = time.monotonic(), done_count(c, build)
        record = wait_done(client, build)
        elapsed = time.monotonic() - t0
        for name in names:
            c.stop_worker(name)
        if record["counts"]["changed"] != stories:
            raise RuntimeError(f"expected {stories} changed stories: {record['counts']}")
        return (stories - before) / elapsed


def queue_throughput(c: Cluster, jobs: int = 2000, threads: int = 4) -> tuple[float, float]:
    """Jobs per second that ``threads`` claimers take and finish, and the median claim in ms."""
    from viewfinder.jobs import queue
    from viewfinder.services.env import Env
    from viewfinder.settings import Settings

    settings = Settings(
        database_url=c.database_url,
        blob_url=c.environ["VIEWFINDER_BLOB_URL"],
        s3_endpoint=c.environ["VIEWFINDER_S3_ENDPOINT"],
        secret=c.environ["VIEWFINDER_SECRET"],
        db_pool_size=threads + 1,
    )
    env = Env.open(settings, migrate=False)
    with env.db.write() as s:
        for i in range(jobs):
            queue.enqueue(s, "bench-noop", f"n{i}")
    claims: list[float] = []
    lock = threading.Lock()

    def claimer(n: int) -> None:
        while True:
            t = time.perf_counter()
            job = queue.claim(env, f"bench:{n}")
            took = time.perf_counter() - t
            if job is None:
                return
            queue.finish(env, job.id)
            with lock:
                claims.append(took)

    start = time.perf_counter()
    pool = [threading.Thread(target=claimer, args=(n,)) for n in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    elapsed = time.perf_counter() - start
    env.close()
    return len(claims) / elapsed, statistics.median(claims) * 1000


def mixed_load(c: Cluster, balancer: Balancer, seconds: float) -> dict[str, Any]:
    """Readers and writers through the load balancer for ``seconds``."""
    with api(c, balancer.url) as client:
        build = upload_build(client, "feedface", 20, changed=0)
        wait_done(client, build)
        second = upload_build(client, "feedbeef", 20, changed=3)
        diff = wait_done(client, second)
        detail = client.get(f"/builds/{second}").json()
        diff_id = detail["changed"]["items"][0]["diff_id"]
    stop_at = time.monotonic() + seconds
    results: dict[str, list[float]] = {"read": [], "write": []}
    errors: list[str] = []
    lock = threading.Lock()

    def reader(n: int) -> None:
        paths = ["/builds", f"/builds/{second}", f"/diffs/{diff_id}"]
        with api(c, balancer.url, "agent") as http:
            i = n
            while time.monotonic() < stop_at:
                t = time.perf_counter()
                try:
                    ok = http.get(paths[i % len(paths)]).is_success
                except httpx.HTTPError:
                    ok = False
                took = time.perf_counter() - t
                with lock:
                    results["read"].append(took)
                    if not ok:
                        errors.append(f"read {paths[i % len(paths)]}")
                i += 1

    def writer(n: int) -> None:
        with api(c, balancer.url) as http:
            i = 0
            while time.monotonic() < stop_at:
                data = page(1000 + n * 100000 + i, changed=i % 5)
                t = time.perf_counter()
                try:
                    ok = http.post(
                        "/images",
                        params={"name": f"w{n}-{i % 7}", "context_key": f"load-{n}"},
                        content=data,
                        headers={"Content-Type": "image/png"},
                    ).is_success
                except httpx.HTTPError:
                    ok = False
                took = time.perf_counter() - t
                with lock:
                    results["write"].append(took)
                    if not ok:
                        errors.append("write /images")
                i += 1

    pool = [threading.Thread(target=reader, args=(n,)) for n in range(8)]
    pool += [threading.Thread(target=writer, args=(n,)) for n in range(2)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    everything = sorted(results["read"] + results["write"])

    def pct(values: list[float], p: float) -> float:
        ordered = sorted(values)
        return ordered[min(int(len(ordered) * p), len(ordered) - 1)] * 1000 if ordered else 0.0

    return {
        "seconds": seconds,
        "requests": len(everything),
        "reads": len(results["read"]),
        "writes": len(results["write"]),
        "p50_ms": pct(everything, 0.50),
        "p95_ms": pct(everything, 0.95),
        "p99_ms": pct(everything, 0.99),
        "read_p99_ms": pct(results["read"], 0.99),
        "write_p99_ms": pct(results["write"], 0.99),
        "errors": len(errors),
        "error_samples": errors[:5],
        "diff_build": diff["id"],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__)
    parser.add_argument("--stories", type=int, default=120, help="stories of the timed build")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the mixed load")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="vf-bench-scale-"))
    out: dict[str, Any] = {"stories": args.stories}
    with s3_server(root) as endpoint, cluster(root / "cluster", endpoint) as c:
        c.start_node("api1")
        c.start_node("api2")
        url = f"http://127.0.0.1:{c.nodes['api1'][1]}"
        with api(c, url) as client:
            log("scale: the base build (registers every story)")
            c.start_worker_with_health("base")
            wait_done(client, upload_build(client, "0000cafe", args.stories, changed=0))
            c.stop_worker("base")
        rates = {}
        for rnd, workers in enumerate((1, 2, 4)):
            rates[workers] = comparisons_per_second(c, url, workers, args.stories, rnd)
            log(f"scale: {workers} worker(s): {rates[workers]:.1f} comparisons/s")
        out["comparisons_per_second"] = rates
        jobs_per_second, claim_ms = queue_throughput(c)
        out["queue"] = {"jobs_per_second": jobs_per_second, "claim_median_ms": claim_ms}
        log(f"scale: queue alone {jobs_per_second:.0f} jobs/s, claim median {claim_ms:.2f} ms")
        balancer = Balancer([c.nodes["api1"][1], c.nodes["api2"][1]])
        c.start_worker_with_health("load-1")
        c.start_worker_with_health("load-2")
        try:
            log(f"scale: mixed load over two nodes for {args.seconds:g} s")
            out["mixed"] = mixed_load(c, balancer, args.seconds)
        finally:
            balancer.close()
        out["deadlocks"] = deadlocks(c)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "scale.json").write_text(json.dumps(out, indent=2))
    mixed = out["mixed"]
    print(
        f"mixed load: {mixed['requests']} requests ({mixed['reads']} reads, {mixed['writes']} "
        f"pushes) in {mixed['seconds']:g} s; p50 {mixed['p50_ms']:.0f} ms, p95 "
        f"{mixed['p95_ms']:.0f} ms, p99 {mixed['p99_ms']:.0f} ms (reads {mixed['read_p99_ms']:.0f},"
        f" pushes {mixed['write_p99_ms']:.0f}); PostgreSQL deadlocks {out['deadlocks']}"
    )
    print(
        f"queue: {jobs_per_second:.0f} jobs/s claimed and finished by 4 workers, claim median "
        f"{claim_ms:.2f} ms"
    )
    print(
        f"scale: 1w {rates[1]:.1f}/s, 2w {rates[2]:.1f}/s, 4w {rates[4]:.1f}/s; two nodes p99 "
        f"{mixed['p99_ms']:.0f} ms, errors {mixed['errors']}"
    )


if __name__ == "__main__":
    main()
