"""The Miseru profile: Miseru's tools (miseru_push ... miseru_delete_baseline) with its argument
names, its results and its wording, over Viewfinder's services. It renames and reshapes; every
rule (contexts, roles, compare on PNG only, baselines per PR) stays in the services."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from viewfinder.errors import InvalidInput, ViewfinderError
from viewfinder.mcp import miseru_words as words
from viewfinder.mcp.common import read_image
from viewfinder.mcp.miseru_shapes import (
    RENDER_KIND,
    Approved,
    BaselineArg,
    CloseArgs,
    CommentArgs,
    DiffArgs,
    DiffIdArg,
    Expired,
    ImageArg,
    ImageKind,
    ListBaselinesArgs,
    MiseruDiff,
    PrComment,
    Push,
    Pushed,
)
from viewfinder.mcp.tooling import Call, Picture, Result, TextResult, ToolSpec
from viewfinder.services import (
    baselines,
    contexts,
    diffs,
    images,
    projects,
    prs,
    pushes,
    renders,
    reviews,
)
from viewfinder.services.baselines import BaselineRecord
from viewfinder.services.contexts import CloseResult
from viewfinder.services.diffs import DiffRecord
from viewfinder.services.records import Page

A = TypeVar("A", bound=BaseModel)
REPO_VARIABLES = ("VIEWFINDER_REPO", "MISERU_REPO", "GITHUB_REPOSITORY")


def _failed(verb: str, run: Callable[[Call, A], Result]) -> Callable[[Call, A], Result]:
    """Miseru reports a refusal as the API's answer, `承認失敗 (403): <message>`; the [code]
    the tool error starts with stays in front."""

    @functools.wraps(run)
    def reported(call: Call, args: A) -> Result:
        try:
            return run(call, args)
        except ViewfinderError as exc:
            raise type(exc)(f"{words.FAILED[verb]} ({exc.status}): {exc.message}") from None

    return reported


# ---- where the caller is ----------------------------------------------------------------------


def _repo_here() -> str | None:
    from viewfinder.plumbing.gitinfo import origin_repo

    for variable in REPO_VARIABLES:
        if os.environ.get(variable):
            return os.environ[variable]
    return origin_repo()


def local_args(arguments: dict[str, Any]) -> dict[str, Any]:
    """What Miseru reads from the agent's machine when an argument is left out: the repo of a
    pr_number, and the commit (HEAD) of a push. Only run where that machine is this one."""
    from viewfinder.plumbing.gitinfo import head_commit

    filled = dict(arguments)
    if filled.get("pr_number") is not None and not filled.get("repo"):
        filled["repo"] = _repo_here()
        if not filled["repo"]:
            raise InvalidInput(
                "pr_number には repo(owner/repo)が必要です。repo を渡すか、"
                f"{'・'.join(REPO_VARIABLES)} のどれかを設定するか、GitHub の origin リモートの"
                "ある git リポジトリの中で起動してください"
            )
    if "commit_sha" in filled and not filled["commit_sha"]:
        filled["commit_sha"] = head_commit()
    return filled


def _need_repo(pr_number: int | None, repo: str | None) -> None:
    # Over stdio local_args has filled repo or said why it could not; only HTTP gets here.
    if pr_number is None or repo:
        return
    raise InvalidInput(
        "pr_number には repo(owner/repo)が必要です。repo を渡してください(HTTP では、この"
        "サーバーはあなたの環境変数や git リポジトリを読めません。stdio の `viewfinder mcp "
        "--profile miseru` なら読みます)"
    )


def _same_project(call: Call, project: str | None) -> None:
    """Everything here is the key's project; naming another one is a mistake to report."""
    if project is None:
        return
    mine = projects.whoami(call.env, call.actor)
    if project not in (mine.id, mine.name):
        raise InvalidInput(
            f"このキーはプロジェクト {mine.name!r}({mine.id})のもので、{project!r} には届きま"
            "せん。project を省くか、そのプロジェクトのキーで接続してください"
        )


# ---- push and images --------------------------------------------------------------------------


def _push(call: Call, a: Push) -> TextResult:
    _same_project(call, a.project)
    _need_repo(a.pr_number, a.repo)
    data = read_image(call, a.file, what="file")
    r = pushes.push(
        call.env,
        call.actor,
        data,
        name=a.name,
        context_key=a.context_key,
        context_type=a.context_type,
        context_label=a.context_label,
        pr_number=a.pr_number,
        repo=a.repo,
        commit_sha=a.commit_sha,
        viewport=a.viewport,
        tags=a.tags,
        compare=a.compare,
        max_diff_ratio=a.max_diff_ratio,
        masks=a.masks,
    )
    diff = MiseruDiff.of(r.diff) if a.compare and r.diff_requested and r.diff else None
    record = Pushed(
        image_id=r.image_id,
        view_url=r.view_url,
        markdown=r.markdown,
        diff_requested=r.diff_requested,
        diff=diff,
        replaced_image_id=r.replaced_image_id,
    )
    text = words.pushed(r.image_id, r.markdown)
    if a.compare and r.diff is not None:
        text += f"\n\n比較: {words.compare_line(r.diff)}"
    return TextResult([text, record.model_dump_json()], record)


def _expire(call: Call, a: ImageArg) -> TextResult:
    image = images.expire_image(call.env, call.actor, a.image_id)
    record = Expired(
        image_id=image.id, name=image.name, expired=image.expired, expired_at=image.expired_at
    )
    return TextResult([words.expired(image.id)], record)


def _pictures(call: Call, d: DiffRecord, kinds: list[ImageKind]) -> list[str | Picture]:
    links = {"baseline": d.urls.baseline, "candidate": d.urls.candidate, "diff": d.urls.diff}
    blocks: list[str | Picture] = []
    for kind in dict.fromkeys(kinds):
        if d.state == "requested" and kind != "candidate":
            blocks.append(words.picture_missing(kind, None))
            continue
        try:
            (shown,) = renders.render_diff(call.env, call.actor, d.id, RENDER_KIND[kind])
        except InvalidInput as exc:
            blocks.append(words.picture_missing(kind, exc.message))
            continue
        note = f"{shown.width}x{shown.height}"
        blocks.append(Picture(label=kind, png=shown.png, note=note, link=links[kind]))
    return blocks


def _diff(call: Call, a: DiffArgs) -> TextResult:
    found = diffs.latest_for_image(call.env, call.actor, a.image_id)
    if found is None:
        record = MiseruDiff(image_id=a.image_id, state="none")
        sentence = words.never_compared(a.image_id)
        return TextResult([sentence, record.model_dump_json()], record)
    record = MiseruDiff.of(found)
    sentence = f"{words.found(found)}。{record.next_step}"
    blocks = [sentence, record.model_dump_json(), *_pictures(call, found, a.images)]
    hint = f"save it with `viewfinder image {a.image_id} --out DIR`"
    return TextResult(blocks, record, large_hint=hint)


# ---- pull requests and contexts ---------------------------------------------------------------


def _comment(call: Call, a: CommentArgs) -> TextResult:
    _need_repo(a.pr_number, a.repo)
    assert a.repo is not None
    markdown = prs.pr_comment(call.env, call.actor, pr_number=a.pr_number, repo=a.repo)
    return TextResult([markdown], PrComment(pr_number=a.pr_number, repo=a.repo, markdown=markdown))


def _close(call: Call, a: CloseArgs) -> TextResult:
    _need_repo(a.pr_number, a.repo)
    r = contexts.close_context(
        call.env,
        call.actor,
        context_key=a.context_key,
        context_type=a.context_type,
        pr_number=a.pr_number,
        repo=a.repo,
        reason=a.reason,
    )
    return TextResult([words.closed(r)], r)


# ---- baselines --------------------------------------------------------------------------------


def _approve(call: Call, a: DiffIdArg) -> TextResult:
    r = reviews.approve_diff(call.env, call.actor, a.diff_id)
    record = Approved(
        diff_id=r.diff.id,
        baseline_id=r.baseline.id,
        baseline_scope=r.baseline.scope,
        context_id=r.baseline.context_id,
        already_approved=r.already_approved,
        message=words.approved(r.diff.id, r.baseline.scope, r.already_approved),
    )
    return TextResult([record.message], record)


def _list_baselines(call: Call, a: ListBaselinesArgs) -> Page[BaselineRecord]:
    _same_project(call, a.project)
    return baselines.list_baselines(call.env, call.actor, cursor=a.cursor)


def _delete_baseline(call: Call, a: BaselineArg) -> TextResult:
    b = baselines.delete_baseline(call.env, call.actor, a.baseline_id)
    name = b.name + (f" ({b.variant})" if b.variant else "")
    return TextResult([words.deleted(b.id, name)], b)


# ---- the tools --------------------------------------------------------------------------------

TOOLS: list[ToolSpec] = [
    ToolSpec(
        "miseru_push",
        "スクリーンショットを配信コンテキスト(GitHub PR や任意のラベル)にアップロードし、"
        "貼り付け用の markdown を返します。compare: true ならベースライン(PR のもの、無ければ"
        "共有のもの。最初の push は登録)と比べ、最大 30 秒待ちます。コメントは投稿しません。",
        Push,
        Pushed,
        _failed("push", _push),
        file_args=("file",),
        local_args=local_args,
        operation="push",
    ),
    ToolSpec(
        "miseru_expire",
        "アップロード済みの画像を失効させます(配信を止めます)。",
        ImageArg,
        Expired,
        _failed("expire", _expire),
        destructive=True,
        idempotent=True,
        operation="expire_image",
    ),
    ToolSpec(
        "miseru_comment",
        "PR の全スクリーンショットをまとめた 1 PR = 1 コメント用の markdown を返します。",
        CommentArgs,
        PrComment,
        _failed("comment", _comment),
        read_only=True,
        local_args=local_args,
        operation="pr_comment",
    ),
    ToolSpec(
        "miseru_close_context",
        "配信コンテキストを閉じ、失効ポリシーを適用します(on_close なら画像を失効)。merged なら "
        "PR のベースラインを共有へ上げます。冪等です。画像 1 枚だけなら miseru_expire を。",
        CloseArgs,
        CloseResult,
        _failed("close", _close),
        destructive=True,
        idempotent=True,
        local_args=local_args,
        operation="close_context",
    ),
    ToolSpec(
        "miseru_diff",
        "push した画像の比較(Kurabe)の結果: 状態の一文、同じ内容の JSON、求めた画像"
        "(baseline、candidate、diff: 変化した画素は赤、サイズの違いは青、マスクは灰色)。",
        DiffArgs,
        MiseruDiff,
        _failed("diff", _diff),
        read_only=True,
        images=True,
        operation="get_diff",
    ),
    ToolSpec(
        "miseru_approve",
        "差分を承認し、比べたベースラインをその画像に置き換えます(PR の push なら その PR の"
        "ベースラインだけ。PR を merged で閉じると共有へ)。取り消せません。miseru_diff で"
        "確かめてから。承認の権限が無いキーでは 403 なので、人に頼んでください。",
        DiffIdArg,
        Approved,
        _failed("approve", _approve),
        idempotent=True,
        operation="approve_diff",
    ),
    ToolSpec(
        "miseru_list_baselines",
        "ベースラインの一覧を 1 ページ(最大 200 件)返します。共有は context_id: null、PR "
        "ごとのものも混ざります。続きは next_cursor を cursor に。",
        ListBaselinesArgs,
        Page[BaselineRecord],
        _failed("list baselines", _list_baselines),
        read_only=True,
        operation="list_baselines",
    ),
    ToolSpec(
        "miseru_delete_baseline",
        "ベースラインを 1 件削除します(共有・PR のどちらも)。取り消せません。次の compare は"
        "もう一方の層と比べ、どちらも無ければ登録し直します。承認の権限が必要です。",
        BaselineArg,
        BaselineRecord,
        _failed("delete", _delete_baseline),
        destructive=True,
        operation="delete_baseline",
    ),
]
