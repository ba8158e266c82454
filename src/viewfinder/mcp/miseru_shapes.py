"""The Miseru profile's arguments and records, in Miseru's names (snake_case, image_id,
diff_id, context_key ...)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.mcp import miseru_words as words
from viewfinder.services.comparisons import AnalysisRecord
from viewfinder.services.diffs import DiffRecord
from viewfinder.services.records import Urls

# ---- records ----------------------------------------------------------------------------------


class MiseruDiff(BaseModel):
    """A pushed image's newest comparison, as GET /v1/images/:id/diff answers it."""

    model_config = ConfigDict(extra="allow")

    image_id: str
    state: str = Field(
        description="none(未比較)/ requested(計算中)/ done / failed。今後増えることがあります。"
    )
    requested_at: datetime | None = None
    completed_at: datetime | None = None
    baseline_id: str | None = None
    baseline_scope: str | None = Field(
        None, description="context(PR のベースライン)/ shared(共有)。"
    )
    diff_id: str | None = None
    diff_ratio: float | None = None
    max_diff_ratio: float | None = None
    changed: bool | None = None
    status: str | None = Field(
        None, description="registered / changed / unchanged / failed。計算中は null。"
    )
    stale: bool | None = Field(None, description="比較した後にベースラインが更新された。")
    failure_reason: str | None = None
    analysis: AnalysisRecord | None = Field(
        None, description="何が変わったか: kind、verdict、summary、reasoning と各変化。"
    )
    approved: bool | None = None
    name: str | None = None
    viewport: str | None = None
    urls: Urls | None = Field(None, description="画像への署名付き・期限付きのリンク。")
    next_step: str | None = Field(None, description="次の操作(Miseru のツール名で)。")

    @classmethod
    def of(cls, d: DiffRecord) -> MiseruDiff:
        return cls(
            image_id=d.image_id,
            state=d.state,
            requested_at=d.requested_at,
            completed_at=d.completed_at,
            baseline_id=d.baseline_id,
            baseline_scope=d.baseline_scope,
            diff_id=d.id,
            diff_ratio=d.diff_ratio,
            max_diff_ratio=d.max_diff_ratio,
            changed=d.changed,
            status=d.outcome,
            stale=d.stale,
            failure_reason=d.failure_reason,
            analysis=d.analysis,
            approved=d.approved_at is not None,
            name=d.name,
            viewport=d.variant or None,
            urls=d.urls,
            next_step=words.next_step(d),
        )


class Pushed(BaseModel):
    image_id: str
    view_url: str
    markdown: str
    diff_requested: bool
    diff: MiseruDiff | None = Field(
        description="compare: true のとき、最大 30 秒待った後の比較状態(miseru_diff と同じ形)。"
    )
    replaced_image_id: str | None = Field(
        description="同じコンテキストで name と viewport が同じだった古い画像(失効済み)。"
    )


class Expired(BaseModel):
    image_id: str
    name: str
    expired: bool
    expired_at: datetime | None


class PrComment(BaseModel):
    pr_number: int
    repo: str
    markdown: str


class Approved(BaseModel):
    diff_id: str
    baseline_id: str
    baseline_scope: str
    context_id: str | None
    already_approved: bool
    message: str


# ---- arguments -----------------------------------------------------------------------------------

PrNumber = Field(
    None, description="context_type=github_pr / context_key=<owner/repo>#<n> のショートハンド。"
)
Repo = Field(
    None,
    description="pr_number と組み合わせる GitHub リポジトリ(owner/repo)。stdio では省略時に "
    "VIEWFINDER_REPO → MISERU_REPO → GITHUB_REPOSITORY → git の origin の順で解決。",
)
ContextKey = Field(
    None,
    description="コンテキストのキー。github_pr では owner/repo#<PR番号>、manual では任意の"
    "ラベル。context_key と pr_number のどちらか一方が必須(同時指定はエラー)。",
)


class Push(BaseModel):
    file: str = Field(
        description="画像ファイルの絶対パス(png/jpg/webp、5MB 未満。stdio)。HTTP では画像"
        "そのものを data:image/png;base64,... の URL か base64 で。"
    )
    name: str = Field(
        description="論理名(例: home、login、checkout@mobile)。同じコンテキストで name と "
        "viewport が同じ画像は、古い画像を失効させて置き換えます。"
    )
    context_key: str | None = ContextKey
    context_type: Literal["github_pr", "manual"] | None = Field(
        None, description="github_pr / manual。既定は manual。"
    )
    context_label: str | None = Field(None, description="人間向けの表示名。")
    pr_number: int | None = PrNumber
    repo: str | None = Repo
    commit_sha: str | None = Field(
        None,
        description="証跡のメタデータ。stdio では省略時に git の HEAD(取れなくても失敗しません)。",
    )
    viewport: str | None = Field(None, description="例 1280x800。")
    tags: list[str] = Field(default_factory=list, description="タグ。無ければ作ります。")
    project: str | None = Field(
        None, description="このキーのプロジェクト(名前か id)。ほかのプロジェクトはエラー。"
    )
    compare: bool = Field(
        False,
        description="true ならベースラインと比べ、結果を最大 30 秒待ちます。PNG だけ(PNG 以外で "
        "true にするとアップロードごと失敗します)。",
    )
    max_diff_ratio: float = Field(
        0,
        description="「変化なし」とみなす差分率の上限(0〜1、例 0.001 = 0.1%)。0 より大きい値には"
        "承認の権限(approve)が必要です。",
    )
    masks: list[dict[str, Any]] = Field(
        default_factory=list,
        description="比較から外す矩形 {x, y, width, height} の配列(画像の画素、整数、最大 20 個)。"
        "承認の権限(approve)が必要です。",
    )


class ImageArg(BaseModel):
    image_id: str = Field(description="miseru_push が返した画像 id。")


ImageKind = Literal["baseline", "candidate", "diff"]
RENDER_KIND = {"baseline": "before", "candidate": "after", "diff": "diff"}


class DiffArgs(BaseModel):
    image_id: str = Field(description="miseru_push が返した画像 id。")
    images: list[ImageKind] = Field(
        default_factory=lambda: list[ImageKind](["diff"]),
        description="返す画像: baseline(比較した時点のベースライン)/ candidate(今回の画像)/ "
        "diff(変化した画素を赤、サイズの違う領域を青、マスクを灰色)。既定は [diff]。",
    )


class CommentArgs(BaseModel):
    pr_number: int = Field(description="対象 PR 番号。")
    repo: str | None = Repo


class CloseArgs(BaseModel):
    context_key: str | None = ContextKey
    context_type: Literal["github_pr", "manual"] | None = Field(
        None, description="github_pr / manual。"
    )
    pr_number: int | None = PrNumber
    repo: str | None = Repo
    reason: Literal["merged", "closed", "manual"] = Field(
        "manual",
        description="merged なら PR のベースラインを共有へ上げ、closed・manual(既定)なら捨てます。",
    )


class DiffIdArg(BaseModel):
    diff_id: str = Field(description="miseru_push / miseru_diff が返した差分 id。")


class ListBaselinesArgs(BaseModel):
    project: str | None = Field(
        None, description="このキーのプロジェクト(id か名前)。ほか、および none はエラー。"
    )
    cursor: str | None = Field(None, description="前の結果の next_cursor。続きを取るときに渡す。")


class BaselineArg(BaseModel):
    baseline_id: str = Field(description="miseru_list_baselines が返した id。")
