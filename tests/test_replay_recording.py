"""The recording format: what the recorder sends is checked field by field and read back."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from viewfinder.errors import InvalidInput
from viewfinder.replay.recording import Recording

SAMPLE: dict[str, Any] = {
    "version": 1,
    "startUrl": "https://app.example/list?q=1",
    "viewport": {"width": 1280, "height": 800},
    "userAgent": "Mozilla/5.0",
    "storage": {"local": {"theme": "dark"}, "session": {}, "cookies": "a=1; b=2"},
    "events": [
        {
            "seq": 0,
            "t": 120,
            "type": "click",
            "selectors": ["[data-testid=add]", "#add", "text=Add item"],
            "box": {"x": 10, "y": 20, "width": 80, "height": 24},
            "label": "button 'Add item'",
        },
        {
            "seq": 1,
            "t": 400,
            "type": "input",
            "selectors": ["#name"],
            "box": None,
            "label": "input 'Name'",
            "value": "milk",
        },
        {"seq": 2, "t": 500, "type": "key", "selectors": ["#name"], "box": None, "key": "Enter"},
        {
            "seq": 3,
            "t": 700,
            "type": "scroll",
            "selectors": [],
            "box": None,
            "scroll": {"x": 0, "y": 640},
        },
        {
            "seq": 4,
            "t": 900,
            "type": "navigation",
            "selectors": [],
            "box": None,
            "url": "https://app.example/next",
        },
    ],
    "network": [
        {
            "seq": 0,
            "t": 130,
            "method": "GET",
            "url": "https://app.example/api/items?page=1",
            "status": 200,
            "requestBody": None,
            "responseBody": "[]",
            "responseHeaders": {"content-type": "application/json"},
            "truncated": False,
        },
        {
            "seq": 1,
            "t": 450,
            "method": "POST",
            "url": "https://app.example/api/items",
            "status": 201,
            "requestBody": '{"name":"milk"}',
            "responseBody": "{}",
            "responseHeaders": {},
            "truncated": False,
        },
        {
            "seq": 2,
            "t": 460,
            "method": "GET",
            "url": "https://app.example/api/items?page=1",
            "status": 200,
            "requestBody": None,
            "responseBody": "[1]",
            "responseHeaders": {},
            "truncated": False,
        },
    ],
    "urls": [
        {"t": 0, "url": "https://app.example/list?q=1"},
        {"t": 900, "url": "https://app.example/next"},
    ],
}


def test_a_recording_reads_back_to_the_same_json() -> None:
    rec = Recording.from_json(SAMPLE)
    assert rec.to_json() == SAMPLE
    assert Recording.from_json(rec.to_json()) == rec
    assert rec.start_path == "/list?q=1"
    assert rec.network[0].path == "/api/items?page=1"


def test_the_user_flow_and_network_summary_read_as_sentences() -> None:
    rec = Recording.from_json(SAMPLE)
    assert rec.user_flow() == [
        "click button 'Add item'",
        "type 'milk' into input 'Name'",
        "press Enter in #name",
        "scroll the page to y=640",
        "go to https://app.example/next",
    ]
    assert rec.network_summary() == ["GET /api/items 200 x2", "POST /api/items 201"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda o: o.update(version=2), "version"),
        (lambda o: o.pop("startUrl"), "startUrl"),
        (lambda o: o.update(startUrl="file:///etc/passwd"), "startUrl"),
        (lambda o: o["viewport"].update(width=0), "viewport.width"),
        (lambda o: o["events"][1].update(type="hover"), "events[1].type"),
        (lambda o: o["events"][1].pop("value"), "events[1].value"),
        (lambda o: o["events"][0].update(selectors=[]), "events[0].selectors"),
        (lambda o: o["events"][2].update(key=""), "events[2].key"),
        (lambda o: o["events"][0]["box"].update(width="wide"), "events[0].box.width"),
        (lambda o: o["network"][1].update(method="BREW"), "network[1].method"),
        (lambda o: o["network"][1].update(status=700), "network[1].status"),
        (lambda o: o["storage"].update(local={"k": 1}), "storage.local.k"),
        (lambda o: o["urls"][0].update(t=-1), "urls[0].t"),
    ],
)
def test_a_malformed_recording_is_refused_naming_the_field(change: Any, field: str) -> None:
    obj = copy.deepcopy(SAMPLE)
    change(obj)
    with pytest.raises(InvalidInput) as caught:
        Recording.from_json(obj)
    assert caught.value.details["field"] == field
    assert field in caught.value.message
