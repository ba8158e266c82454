"""A bounded schemathesis run against the REST API: generated requests never cause a 500."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings

from viewfinder.app import create_app
from viewfinder.services import projects
from viewfinder.services.env import Env
from viewfinder.settings import Settings


def test_generated_requests_never_cause_a_server_error(tmp_path: Path) -> None:
    env = Env.open(Settings(data_dir=tmp_path, secret="s", workers=0))
    boot = projects.bootstrap(env)
    assert boot is not None
    headers = {"Authorization": f"Bearer {boot.keys['admin'].key}"}
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(env=env, workers=0))
    checked = 0
    for result in schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy())
        @settings(
            max_examples=8, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        def no_server_error(case: Any) -> None:
            response = case.call(headers=headers)
            assert response.status_code < 500, (
                f"{case.method} {case.formatted_path} {case.query}: {response.text}"
            )

        no_server_error()
        checked += 1
    env.close()
    assert checked >= 30
