"""Schemathesis runs every REST operation with every one of its checks (no server error, only
documented statuses, the responses' schemas, valid data accepted, invalid data refused ...), on
bounded examples from a fixed seed: the API and its OpenAPI document agree.

Valid-data acceptance is left out where a rule cannot be written in the document: an image's
bytes must be a real PNG (or JPEG/WebP), and a few operations take exactly one of two ways to
name their target. Cursors are opaque (only the server makes them), so generated ones are
dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, seed, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from viewfinder.app import create_app
from viewfinder.services import projects
from viewfinder.services.env import Env
from viewfinder.settings import Settings

# Operations whose valid requests (by the document) may still be refused, and why.
RULES_BEYOND_THE_DOCUMENT = {
    "add_stories": "the bytes must be a PNG",
    "push": "the bytes must be an image; exactly one of context_key and pr_number",
    "close_context": "exactly one of context_key and pr_number, the key's form per type",
    "set_policy": "exactly one of context_key and pr_number; ttl_seconds only with ttl",
    "receive_upload": "the bytes must be a zip of a static build",
    "register_preview": "the URL must lead to an address captures may reach",
    "trigger_test_run": "a git diff must name a changed file; some session must be chosen",
    "report_check": "exactly one of text and failed_reason",
    "create_review": "exactly one of images, capture_url, pdf and html; images must be images",
    "add_screenshot": "the image must be an image",
}
FIND_BUILD = "GET /api/v1/build"  # exactly one of build_id, commit_sha and pr_number


def test_every_operation_passes_every_check(tmp_path: Path) -> None:
    env = Env.open(Settings(data_dir=tmp_path, secret="s", workers=0))
    boot = projects.bootstrap(env)
    assert boot is not None
    headers = {"Authorization": f"Bearer {boot.keys['admin'].key}"}
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(env=env, workers=0))
    checked = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        declared = operation.definition.raw.get("x-operation")
        loose = declared in RULES_BEYOND_THE_DOCUMENT or operation.label == FIND_BUILD
        run(operation, headers, [positive_data_acceptance] if loose else [])
        checked += 1
    env.close()
    assert checked >= 40


def run(operation: Any, headers: dict[str, str], excluded: list[Any]) -> None:
    @given(case=operation.as_strategy())
    @settings(max_examples=8, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @seed(20261201)
    def every_check(case: Any) -> None:
        if case.query:
            case.query.pop("cursor", None)
            # No worker runs here: a request told to wait for one (a capture, a comparison)
            # would wait its whole time, up to minutes, for nothing the fuzzing checks.
            case.query.pop("wait", None)
        case.call_and_validate(headers=headers, excluded_checks=excluded)

    every_check()
