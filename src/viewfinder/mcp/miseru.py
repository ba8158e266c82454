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
    """Miseru reports a refusal as the API's answer, `approve failed (403): <message>`; the
    [code] the tool error starts with stays in front."""

    @functools.wraps(run)
    def reported(call: Call, args: A) -> Result:
        try:
            return run(call, args)
        except ViewfinderError as exc:
            raise type(exc)(f"{verb} failed ({exc.status}): {exc.message}") from None

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
    if "commit_sha" in filled and not filled["commit_sha"]:
        filled["commit_sha"] = head_commit()
    return filled


def _need_repo(call: Call, pr_number: int | None, repo: str | None) -> None:
    if pr_number is None or repo:
        return
    where = (
        f"none of {', '.join(REPO_VARIABLES)} or a GitHub `origin` remote of the current "
        "directory gave one"
        if call.local_files
        else "over HTTP this server cannot read your environment or git checkout (`viewfinder "
        "mcp --profile miseru` over stdio reads them)"
    )
    raise InvalidInput(f"pr_number needs repo (owner/repo): pass repo; {where}")


def _same_project(call: Call, project: str | None) -> None:
    """Everything here is the key's project; naming another one is a mistake to report."""
    if project is None:
        return
    mine = projects.whoami(call.env, call.actor)
    if project not in (mine.id, mine.name):
        raise InvalidInput(
            f"this key belongs to project {mine.name!r} ({mine.id}) and reaches only that one, "
            f"not {project!r}: omit project, or connect with a key of that project"
        )


# ---- push and images --------------------------------------------------------------------------


def _compare_line(d: DiffRecord) -> str:
    if d.state == "requested":
        return (
            f"still computing after 30 s; get the result with miseru_diff (image_id {d.image_id})"
        )
    if d.outcome != "changed":
        return d.found
    return (
        f"{d.found} diff_id {d.id}. Look with miseru_diff; if intended, miseru_approve; if "
        "not, fix the code and push again with compare: true"
    )


def _push(call: Call, a: Push) -> TextResult:
    _same_project(call, a.project)
    _need_repo(call, a.pr_number, a.repo)
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
    text = f"Uploaded (id: {r.image_id})\n\nMarkdown to paste in the PR:\n{r.markdown}"
    if a.compare and r.diff is not None:
        text += f"\n\nCompare: {_compare_line(r.diff)}"
    return TextResult([text, record.model_dump_json()], record)


def _expire(call: Call, a: ImageArg) -> TextResult:
    image = images.expire_image(call.env, call.actor, a.image_id)
    record = Expired(
        image_id=image.id, name=image.name, expired=image.expired, expired_at=image.expired_at
    )
    return TextResult([f"Expired: {image.id}"], record)


def _sentence(d: DiffRecord) -> str:
    if d.state == "done" and d.outcome == "changed":
        return f"{d.found} diff_id {d.id}; miseru_approve makes this image the baseline."
    return f"{d.found} {d.next_step}"


def _pictures(call: Call, d: DiffRecord, kinds: list[ImageKind]) -> list[str | Picture]:
    links = {"baseline": d.urls.baseline, "candidate": d.urls.candidate, "diff": d.urls.diff}
    blocks: list[str | Picture] = []
    for kind in dict.fromkeys(kinds):
        if d.state == "requested" and kind != "candidate":
            blocks.append(f"{kind}: not yet (the comparison is still computing)")
            continue
        try:
            (shown,) = renders.render_diff(call.env, call.actor, d.id, RENDER_KIND[kind])
        except InvalidInput as exc:
            blocks.append(f"{kind}: none ({exc.message})")
            continue
        note = f"{shown.width}x{shown.height}"
        blocks.append(Picture(label=kind, png=shown.png, note=note, link=links[kind]))
    return blocks


def _diff(call: Call, a: DiffArgs) -> TextResult:
    found = diffs.latest_for_image(call.env, call.actor, a.image_id)
    if found is None:
        record = MiseruDiff(image_id=a.image_id, state="none")
        sentence = (
            f"Image {a.image_id} was never compared: push it with compare: true to compare it "
            "with its baseline."
        )
        return TextResult([sentence, record.model_dump_json()], record)
    record = MiseruDiff.of(found)
    blocks = [_sentence(found), record.model_dump_json(), *_pictures(call, found, a.images)]
    hint = f"save it with `viewfinder image {a.image_id} --out DIR`"
    return TextResult(blocks, record, large_hint=hint)


# ---- pull requests and contexts ---------------------------------------------------------------


def _comment(call: Call, a: CommentArgs) -> TextResult:
    _need_repo(call, a.pr_number, a.repo)
    assert a.repo is not None
    markdown = prs.pr_comment(call.env, call.actor, pr_number=a.pr_number, repo=a.repo)
    return TextResult([markdown], PrComment(pr_number=a.pr_number, repo=a.repo, markdown=markdown))


def _close(call: Call, a: CloseArgs) -> TextResult:
    _need_repo(call, a.pr_number, a.repo)
    r = contexts.close_context(
        call.env,
        call.actor,
        context_key=a.context_key,
        context_type=a.context_type,
        pr_number=a.pr_number,
        repo=a.repo,
        reason=a.reason,
    )
    c = r.context
    if r.already_closed:
        text = f"{c.type}:{c.key} was closed already ({c.close_reason}); nothing changed."
    else:
        text = (
            f"Closed {c.type}:{c.key} (policy: {c.expire_policy}, marked: {c.close_reason}, "
            f"expired: {r.images_expired}; baselines promoted: {r.baselines_promoted}, "
            f"discarded: {r.baselines_discarded})"
        )
    return TextResult([text], r)


# ---- baselines --------------------------------------------------------------------------------


def _approve(call: Call, a: DiffIdArg) -> TextResult:
    r = reviews.approve_diff(call.env, call.actor, a.diff_id)
    record = Approved(
        diff_id=r.diff.id,
        baseline_id=r.baseline.id,
        baseline_scope=r.baseline.scope,
        context_id=r.baseline.context_id,
        already_approved=r.already_approved,
        message=r.message,
    )
    return TextResult([r.message], record)


def _list_baselines(call: Call, a: ListBaselinesArgs) -> Page[BaselineRecord]:
    _same_project(call, a.project)
    return baselines.list_baselines(call.env, call.actor, cursor=a.cursor)


def _delete_baseline(call: Call, a: BaselineArg) -> TextResult:
    b = baselines.delete_baseline(call.env, call.actor, a.baseline_id)
    name = b.name + (f" ({b.variant})" if b.variant else "")
    text = (
        f"Deleted: {b.id}. The next push of {name} with compare: true compares with the PR's "
        "baseline if there is one, else the shared one; with neither, it becomes the new "
        "baseline."
    )
    return TextResult([text], b)


# ---- the tools --------------------------------------------------------------------------------

TOOLS: list[ToolSpec] = [
    ToolSpec(
        "miseru_push",
        "Upload a screenshot into a delivery context (a GitHub PR or any label) and get the "
        "Markdown to paste. With compare: true, compare it with its baseline (Kurabe; the PR's, "
        "else the shared one; the first push registers it) and wait up to 30 s. Posts no "
        "comment itself.",
        Push,
        Pushed,
        _failed("push", _push),
        file_args=("file",),
        local_args=local_args,
        operation="push",
    ),
    ToolSpec(
        "miseru_expire",
        "Expire one uploaded image: it is no longer delivered.",
        ImageArg,
        Expired,
        _failed("expire", _expire),
        destructive=True,
        idempotent=True,
        operation="expire_image",
    ),
    ToolSpec(
        "miseru_comment",
        "The Markdown of one PR comment gathering all of the PR's screenshots.",
        CommentArgs,
        PrComment,
        _failed("comment", _comment),
        read_only=True,
        local_args=local_args,
        operation="pr_comment",
    ),
    ToolSpec(
        "miseru_close_context",
        "Close a delivery context and apply its expiry policy (on_close expires its images); "
        "merged promotes a PR's baselines to the shared ones. Idempotent. To expire one image, "
        "use miseru_expire.",
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
        "The comparison (Kurabe) of a pushed image: a status sentence, the record as JSON, then "
        "the requested images (baseline, candidate, diff: changed pixels red, size differences "
        "blue, masks gray) to look at.",
        DiffArgs,
        MiseruDiff,
        _failed("diff", _diff),
        read_only=True,
        images=True,
        operation="get_diff",
    ),
    ToolSpec(
        "miseru_approve",
        "Approve a diff: its image replaces the baseline it was compared with (for a PR's push, "
        "only that PR's baseline, shared once the PR closes merged). Cannot be undone; check "
        "with miseru_diff first. Needs a key with the approve role; otherwise ask a person.",
        DiffIdArg,
        Approved,
        _failed("approve", _approve),
        idempotent=True,
        operation="approve_diff",
    ),
    ToolSpec(
        "miseru_list_baselines",
        "A page (up to 200) of current baselines, the shared ones (context_id null) and each "
        "PR's own. Pass next_cursor back as cursor for more.",
        ListBaselinesArgs,
        Page[BaselineRecord],
        _failed("list baselines", _list_baselines),
        read_only=True,
        operation="list_baselines",
    ),
    ToolSpec(
        "miseru_delete_baseline",
        "Delete one baseline (shared or a PR's). Cannot be undone: the next compare of its "
        "name compares with the other layer, or registers anew. Needs the approve role.",
        BaselineArg,
        BaselineRecord,
        _failed("delete", _delete_baseline),
        destructive=True,
        operation="delete_baseline",
    ),
]
