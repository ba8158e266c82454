"""A server of several processes on PostgreSQL and an S3 bucket, tried as an operator runs one:
workers that never deadlock each other, nodes that start together, and a build that finishes
with every story compared once while a worker and an API node are killed under it."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.cluster import Balancer, Cluster, cluster, s3_server
from tests.conftest import shot
from tests.server import VIEWFINDER, clean_environ, free_port, stop
from viewfinder import __version__


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with s3_server(tmp_path_factory.mktemp("s3")) as endpoint:
        yield endpoint


def stories(folder: Path, count: int, *, changed: bool) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        box = (i % 40, 2, i % 40 + 8, 10) if changed else None
        (folder / f"s{i:03}.png").write_bytes(shot(box=box))
    return folder


def upload(c: Cluster, url: str, folder: Path, commit: str, *extra: str) -> subprocess.Popen[str]:
    environ = c.environ | {"VIEWFINDER_URL": url, "VIEWFINDER_KEY": c.keys["ci"]}
    return subprocess.Popen(
        [VIEWFINDER, "upload", str(folder), "--commit", commit, "--wait", "--json", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environ,
    )


def finished(proc: subprocess.Popen[str], code: int) -> dict[str, object]:
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == code, err
    result: dict[str, object] = json.loads(out)
    return result


def query(c: Cluster, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(c.database_url.replace("+psycopg", "")) as conn:
        return conn.execute(sql).fetchall()


def test_four_workers_share_a_build_without_deadlocking(tmp_path: Path, s3: str) -> None:
    with cluster(tmp_path, s3) as c:
        c.start_node("api")
        for n in range(4):
            c.start_worker(f"w{n}")
        url = f"http://127.0.0.1:{c.nodes['api'][1]}"
        first = finished(upload(c, url, stories(tmp_path / "a", 60, changed=False), "aaa1"), 0)
        assert first["counts"]["new"] == 60  # type: ignore[index]
        second = finished(upload(c, url, stories(tmp_path / "b", 60, changed=True), "bbb2"), 1)
        assert second["counts"]["changed"] == 60 and second["counts"]["failed"] == 0  # type: ignore[index]
        time.sleep(1.5)  # PostgreSQL publishes its statistics within a second
        ((deadlocks,),) = query(
            c, "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
        )
        assert deadlocks == 0
        assert query(c, "SELECT count(*) FROM jobs WHERE state <> 'done'") == [(0,)]


def test_nodes_started_together_on_an_empty_database_all_come_up(tmp_path: Path, s3: str) -> None:
    for attempt in range(2):
        with cluster(tmp_path / str(attempt), s3) as c:
            for name in ("api1", "api2", "api3"):
                c.start_node(name, wait=False)
            for name in ("api1", "api2", "api3"):
                c.wait_node(name)
            outputs = [(c.root / f"{n}.out").read_text() for n in ("api1", "api2", "api3")]
            assert sum("shown only this once" in out for out in outputs) == 1, outputs
            assert (
                sum("printed once, by the node that started first" in out for out in outputs) == 2
            )
            assert query(c, "SELECT count(*) FROM projects") == [(1,)]
            for name in ("api1", "api2", "api3"):
                assert "api node" in (c.root / f"{name}.err").read_text()


def test_a_build_survives_a_killed_worker_and_a_killed_api_node(tmp_path: Path, s3: str) -> None:
    with cluster(tmp_path, s3) as c:
        # The dead worker's job goes to the other once its lease runs out: 4 s, not 15.
        c.environ["VIEWFINDER_JOB_LEASE_SECONDS"] = "4"
        c.start_node("api1")
        c.start_node("api2")
        balancer = Balancer([c.nodes["api1"][1], c.nodes["api2"][1]])
        c.start_worker("w1")
        c.start_worker("w2")
        try:
            finished(
                upload(c, balancer.url, stories(tmp_path / "a", 120, changed=False), "aaa1"), 0
            )
            running = upload(
                c,
                balancer.url,
                stories(tmp_path / "b", 120, changed=True),
                "bbb2",
                "--concurrency",
                "2",
            )
            deadline = time.monotonic() + 60
            while (
                query(c, "SELECT count(*) FROM stories")[0][0] < 150 and time.monotonic() < deadline
            ):
                time.sleep(0.05)
            c.kill("api1")  # mid-upload: the CLI carries on through the other node
            holder = f"%:{c.workers['w1'].pid}"
            while not query(
                c, f"SELECT 1 FROM jobs WHERE state = 'running' AND locked_by LIKE '{holder}'"
            ):
                assert time.monotonic() < deadline + 60, "worker w1 never took a job"
                time.sleep(0.01)
            c.kill("w1")  # while it runs a job, which goes to w2 once its lease runs out
            result = finished(running, 1)
        finally:
            balancer.close()
        assert result["counts"]["changed"] == 120 and result["counts"]["failed"] == 0  # type: ignore[index]
        build = result["build_id"]
        assert query(c, f"SELECT count(*) FROM stories WHERE build_id = '{build}'") == [(120,)]
        per_story = query(
            c,
            "SELECT s.id, count(c.id) FROM stories s JOIN comparisons c ON c.owner_id = s.id "
            f"WHERE s.build_id = '{build}' GROUP BY s.id",
        )
        assert len(per_story) == 120 and {n for _, n in per_story} == {1}, "each compared once"
        assert query(c, "SELECT count(*) FROM builds WHERE status <> 'done'") == [(0,)]


def test_settings_several_nodes_cannot_share_are_refused_at_start(tmp_path: Path) -> None:
    environ = clean_environ() | {
        "VIEWFINDER_DATABASE_URL": "postgresql+psycopg://nobody@127.0.0.1:1/none",
        "VIEWFINDER_DATA_DIR": str(tmp_path),
    }
    for command in (["serve", "--port", str(free_port())], ["worker"]):
        done = subprocess.run(
            [VIEWFINDER, *command], capture_output=True, text=True, env=environ, timeout=60
        )
        assert done.returncode == 2, done.stderr
        assert "VIEWFINDER_BLOB_URL=s3://" in done.stderr
        assert "set the same VIEWFINDER_SECRET on every node" in done.stderr
        assert "VIEWFINDER_SINGLE_NODE=true" in done.stderr


def test_a_worker_answers_its_health_check_and_says_what_it_runs_on(
    tmp_path: Path, s3: str
) -> None:
    with cluster(tmp_path, s3) as c:
        c.start_node("api")
        port = free_port()
        log = tmp_path / "w.err"
        with log.open("wb") as err:
            proc = subprocess.Popen(
                [VIEWFINDER, "worker", "--health-port", str(port), "--data-dir", str(tmp_path)],
                stdout=subprocess.DEVNULL,
                stderr=err,
                env=c.environ,
            )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    answer = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
                    time.sleep(0.1)
            assert answer.status_code == 200
            assert answer.json()["status"] == "ok" and answer.json()["jobs_run"] == 0
            assert httpx.get(f"http://127.0.0.1:{port}/other", timeout=2).status_code == 404
        finally:
            stop(proc)
        (line,) = [ln for ln in log.read_text().splitlines() if " worker (pid " in ln]
        assert "database postgresql+psycopg://" in line and "blobs s3://" in line
        assert f"viewfinder {__version__} worker" in line
