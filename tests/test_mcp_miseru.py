"""The Miseru profile at /mcp/miseru, driven by the official MCP client through Miseru's Kurabe
flow: push with compare, look at the change, approve it for the PR, merge, tidy baselines."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.client import Client
from PIL import Image

from tests.agent_session import connect, data, serving, text, texts, worker
from tests.conftest import Keys, shot
from viewfinder.mcp import miseru
from viewfinder.mcp.server import build_server
from viewfinder.mcp.tooling import LocalBackend
from viewfinder.services import images
from viewfinder.services.env import Env

PROFILE = "miseru"
PR = {"pr_number": 12, "repo": "acme/shop"}


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def jpeg() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (10, 10), (200, 10, 10)).save(buf, "JPEG")
    return buf.getvalue()


JPEG = "data:image/jpeg;base64," + base64.b64encode(jpeg()).decode()


def test_the_kurabe_flow_from_push_to_a_merged_pr_and_a_deleted_baseline(
    env: Env, keys: Keys
) -> None:
    async def flow() -> None:
        async with (
            serving(env) as app,
            connect(app, keys.secrets["agent"], PROFILE) as agent,
            connect(app, keys.secrets["admin"], PROFILE) as person,
        ):
            first = await agent.call_tool(
                "miseru_push",
                {"file": data_url(shot()), "name": "home", "context_key": "main", "compare": True},
            )
            pushed = data(first)
            assert texts(first)[0] == (
                f"アップロード完了(id: {pushed['image_id']})\n\nPR に貼る markdown:\n"
                f"![home]({pushed['view_url']})\n\n"
                "比較: ベースラインとして登録(この名前のベースラインはありませんでした)"
            )
            assert json.loads(texts(first)[1]) == pushed
            assert pushed["diff_requested"] and pushed["diff"]["status"] == "registered"

            changed = shot(box=(0, 0, 16, 12))
            second = await agent.call_tool(
                "miseru_push", {"file": data_url(changed), "name": "home", **PR, "compare": True}
            )
            diff = data(second)["diff"]
            assert diff["state"] == "done" and diff["status"] == "changed" and diff["changed"]
            assert diff["baseline_scope"] == "shared" and diff["diff_ratio"] == pytest.approx(
                192 / 3072
            )
            assert (
                f"比較: 変化あり: 差分率 6.2500%(192 / 3,072 画素)、1 領域。diff_id "
                f"{diff['diff_id']}。miseru_diff で差分画像を確かめ" in text(second)
            )
            # Its next steps name Miseru's tools only.
            assert "accept" not in text(second) and "deny" not in text(second)
            assert "miseru_approve" in diff["next_step"] and "accept" not in diff["next_step"]

            image_id = data(second)["image_id"]
            shown = await agent.call_tool(
                "miseru_diff", {"image_id": image_id, "images": ["diff", "baseline", "candidate"]}
            )
            record = data(shown)
            assert record["diff_id"] == diff["diff_id"] and record["image_id"] == image_id
            kinds = [c.type for c in shown.content]
            assert kinds == ["text", "text", "text", "image", "text", "image", "text", "image"]
            assert texts(shown)[0].startswith("変化あり: 差分率 6.2500%")
            assert json.loads(texts(shown)[1]) == record
            assert [t.split(":")[0] for t in texts(shown)[2:]] == ["diff", "baseline", "candidate"]
            only_diff = await agent.call_tool("miseru_diff", {"image_id": image_id})
            assert [c.type for c in only_diff.content] == ["text", "text", "text", "image"]

            refused = await agent.call_tool("miseru_approve", {"diff_id": diff["diff_id"]})
            assert refused.is_error and refused.structured_content is None
            assert text(refused).startswith("[forbidden] 承認失敗 (403): this key cannot")
            approved = await person.call_tool("miseru_approve", {"diff_id": diff["diff_id"]})
            assert data(approved)["baseline_scope"] == "context"
            assert text(approved) == (
                f"承認しました: {diff['diff_id']}。この PR のベースラインを更新しました。PR を "
                "merged で閉じると、共有のベースラインに反映されます。"
            )

            refused = await agent.call_tool("miseru_close_context", {**PR, "reason": "merged"})
            assert text(refused).startswith("[forbidden]") and "'approve' role" in text(refused)
            closed = await person.call_tool("miseru_close_context", {**PR, "reason": "merged"})
            assert data(closed)["baselines_promoted"] == 1
            assert text(closed) == (
                "github_pr:acme/shop#12 を閉じました(policy: on_close, marked: merged, expired: 1; "
                "ベースライン: 共有へ反映 1 件、破棄 0 件)"
            )
            again = await person.call_tool("miseru_close_context", {**PR, "reason": "merged"})
            assert "すでに閉じています" in text(again)

            listed = data(await agent.call_tool("miseru_list_baselines", {}))
            (baseline,) = listed["items"]
            assert baseline["name"] == "home" and baseline["scope"] == "shared"
            assert baseline["context_id"] is None and baseline["source"] == "promoted"
            assert listed["next_cursor"] is None

            deleted = await person.call_tool(
                "miseru_delete_baseline", {"baseline_id": baseline["id"]}
            )
            assert text(deleted).startswith(f"削除しました: {baseline['id']}。次に home を")
            assert data(await agent.call_tool("miseru_list_baselines", {}))["items"] == []

            expired = await agent.call_tool("miseru_expire", {"image_id": pushed["image_id"]})
            assert text(expired) == f"失効しました: {pushed['image_id']}"
            assert data(expired)["expired"]
            comment = await agent.call_tool("miseru_comment", PR)
            assert text(comment).startswith("## Viewfinder: screenshots of acme/shop#12")

    with worker(env):
        anyio.run(flow)


def test_pushes_are_refused_whole_and_say_why(env: Env, keys: Keys, tmp_path: Path) -> None:
    shot_file = tmp_path / "shot.png"
    shot_file.write_bytes(shot())

    async def refusals() -> None:
        async with serving(env) as app, connect(app, keys.secrets["agent"], PROFILE) as agent:

            async def push(**arguments: object) -> types.CallToolResult:
                base = {"file": data_url(shot()), "name": "home", "context_key": "docs"}
                return await agent.call_tool("miseru_push", base | arguments)

            both = await push(pr_number=3, repo="acme/shop")
            assert text(both) == (
                "[invalid_input] push 失敗 (400): give exactly one of context_key and pr_number"
            )
            neither = await push(context_key=None)
            assert text(neither).startswith("[invalid_input] push 失敗 (400): give exactly one")
            no_repo = await push(context_key=None, pr_number=3)
            assert text(no_repo).startswith("[invalid_input] push 失敗 (400): pr_number には")
            assert "HTTP では" in text(no_repo)

            not_png = await push(file=JPEG, compare=True)
            assert text(not_png).startswith(
                "[invalid_input] push 失敗 (400): compare works on PNG images only"
            )
            masked = await push(masks=[{"x": 0, "y": 0, "width": 4, "height": 4}])
            assert text(masked).startswith("[forbidden] push 失敗 (403): this key cannot push")
            loose = await push(max_diff_ratio=0.01)
            assert loose.is_error and text(loose).startswith("[forbidden] push 失敗 (403)")
            path = await push(file=str(shot_file))
            assert text(path).startswith(
                "[invalid_input] push 失敗 (400): file looks like a file path; over HTTP send "
                "the image itself"
            )
            elsewhere = await push(project="someone-else")
            assert elsewhere.is_error and "には届きません" in text(elsewhere)
            assert images.usage(env, keys.agent).images == 0

            plain = await push(file=JPEG, project="default")
            assert data(plain)["diff"] is None and not data(plain)["diff_requested"]
            assert "比較:" not in text(plain)
            never = await agent.call_tool(
                "miseru_diff", {"image_id": data(plain)["image_id"], "images": ["diff"]}
            )
            assert data(never)["image_id"] == data(plain)["image_id"]
            assert data(never)["state"] == "none" and data(never)["diff_id"] is None
            assert "まだ比較していません" in text(never) and len(never.content) == 2
            listing = await agent.call_tool("miseru_list_baselines", {"project": "none"})
            assert listing.is_error
            assert text(listing).startswith("[invalid_input] ベースライン一覧の取得失敗")

            tools = {t.name: t for t in (await agent.list_tools()).tools}
            assert len(tools) == 8
            reads = {"miseru_comment", "miseru_diff", "miseru_list_baselines"}
            for name, tool in tools.items():
                assert tool.annotations is not None
                assert tool.annotations.read_only_hint is (name in reads), name
            for name in ("miseru_expire", "miseru_close_context", "miseru_delete_baseline"):
                assert tools[name].annotations.destructive_hint  # type: ignore[union-attr]
            assert tools["miseru_diff"].output_schema is not None
            assert tools["miseru_diff"].output_schema.get("additionalProperties") is True

    anyio.run(refusals)


def test_over_stdio_paths_repo_and_commit_come_from_the_agents_machine(
    env: Env, keys: Keys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # not a git checkout: no origin remote, no HEAD
    for variable in miseru.REPO_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/from-actions")
    monkeypatch.setenv("MISERU_REPO", "acme/from-miseru")
    assert miseru.local_args({"pr_number": 4, "repo": None, "commit_sha": None}) == {
        "pr_number": 4,
        "repo": "acme/from-miseru",
        "commit_sha": None,
    }
    assert miseru.local_args({"pr_number": 4, "repo": "acme/given"})["repo"] == "acme/given"
    assert miseru.local_args({"context_key": "docs"}) == {"context_key": "docs"}
    monkeypatch.delenv("MISERU_REPO")
    shot_file = tmp_path / "home.png"
    shot_file.write_bytes(shot())
    # What `viewfinder mcp --profile miseru` serves without VIEWFINDER_URL.
    local = LocalBackend(lambda: env, lambda _: keys.secrets["agent"], local_files=True)

    async def over_stdio() -> None:
        async with Client(build_server(PROFILE, local)) as agent:
            pushed = data(
                await agent.call_tool(
                    "miseru_push", {"file": str(shot_file), "name": "home", "pr_number": 4}
                )
            )
            assert images.get_image(env, keys.agent, pushed["image_id"]).commit_sha is None
            comment = text(await agent.call_tool("miseru_comment", {"pr_number": 4}))
            assert comment.startswith("## Viewfinder: screenshots of acme/from-actions#4")
            assert pushed["markdown"] in comment

    anyio.run(over_stdio)
