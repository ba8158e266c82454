"""What the Miseru profile says, in Miseru's language (Japanese) and with its tools' names only:
skills and prompts written against Miseru match these sentences. Every figure comes from the
service's record; nothing here decides anything."""

from __future__ import annotations

from viewfinder.services.contexts import CloseResult
from viewfinder.services.diffs import DiffRecord

# What a refused call says before the API's message, as `承認失敗 (403): ...`.
FAILED = {
    "push": "push 失敗",
    "expire": "失効失敗",
    "comment": "コメント作成失敗",
    "close": "クローズ失敗",
    "diff": "差分取得失敗",
    "approve": "承認失敗",
    "list baselines": "ベースライン一覧の取得失敗",
    "delete": "削除失敗",
}
LOOK = (
    "miseru_diff で差分画像を確かめ、意図した変化なら miseru_approve、意図しない変化ならコードを"
    "直して compare: true でもう一度 push してください。"
)


def _ratio(d: DiffRecord) -> str:
    pixels = ""
    if d.changed_pixels is not None and d.compared_pixels:
        pixels = f"({d.changed_pixels:,} / {d.compared_pixels:,} 画素)"
    return f"差分率 {(d.diff_ratio or 0):.4%}{pixels}"


def found(d: DiffRecord) -> str:
    """The comparison's result in one sentence (the push's `比較:` line and miseru_diff's)."""
    if d.state == "requested":
        return "計算中"
    if d.outcome == "failed":
        return f"失敗: {d.failure_reason}"
    if d.outcome == "registered":
        return "ベースラインとして登録(この名前のベースラインはありませんでした)"
    if d.outcome == "unchanged":
        why = ""
        if d.changed_pixels:
            noise = d.analysis is not None and d.analysis.noise
            why = "、すべて描画のノイズ" if noise else f"、max_diff_ratio {d.max_diff_ratio:g} 以内"
        return f"変化なし: {_ratio(d)}{why}"
    return f"変化あり: {_ratio(d)}、{len(d.regions)} 領域。diff_id {d.id}"


def next_step(d: DiffRecord) -> str:
    """What to do next, naming Miseru's tools only."""
    if d.state == "requested":
        return "まだ計算中です。少し待ってから miseru_diff で取りに行ってください。"
    if d.outcome == "failed":
        return "画像を確かめて、compare: true でもう一度 push してください。"
    if d.outcome == "registered":
        return "この画像がベースラインになりました。確かめることはありません。"
    if d.outcome == "unchanged":
        return "確かめることはありません。"
    if d.approved_at is not None:
        return "承認済みです。この画像がベースラインです。"
    if d.stale:
        return "比較した後にベースラインが更新されました。compare: true で push し直してください。"
    return LOOK


def compare_line(d: DiffRecord) -> str:
    if d.state == "requested":
        return (
            f"計算中(30 秒で終わりませんでした)。miseru_diff で取りに行ってください"
            f"(image_id {d.image_id})。"
        )
    if d.state == "done" and d.outcome == "changed":
        return f"{found(d)}。{LOOK}"
    return found(d)


def pushed(image_id: str, markdown: str) -> str:
    return f"アップロード完了(id: {image_id})\n\nPR に貼る markdown:\n{markdown}"


def never_compared(image_id: str) -> str:
    return (
        f"画像 {image_id} はまだ比較していません。compare: true で push すると、ベースラインと"
        "比べます。"
    )


def picture_missing(kind: str, why: str | None) -> str:
    return f"{kind}: まだありません(比較を計算中です)" if why is None else f"{kind}: なし({why})"


def closed(r: CloseResult) -> str:
    c = r.context
    if r.already_closed:
        return f"{c.type}:{c.key} はすでに閉じています({c.close_reason})。何も変えていません。"
    return (
        f"{c.type}:{c.key} を閉じました(policy: {c.expire_policy}, marked: {c.close_reason}, "
        f"expired: {r.images_expired}; ベースライン: 共有へ反映 {r.baselines_promoted} 件、"
        f"破棄 {r.baselines_discarded} 件)"
    )


def approved(diff_id: str, scope: str, already: bool) -> str:
    head = f"承認済みです: {diff_id}。" if already else f"承認しました: {diff_id}。"
    if scope == "context":
        return (
            head + "この PR のベースラインを更新しました。PR を merged で閉じると、共有の"
            "ベースラインに反映されます。"
        )
    return head + "共有のベースラインを更新しました。"


def deleted(baseline_id: str, name: str) -> str:
    return (
        f"削除しました: {baseline_id}。次に {name} を compare: true で push すると、PR の"
        "ベースラインがあればそれと、無ければ共有のベースラインと比べます。どちらも無ければ、"
        "その画像が新しいベースラインになります。"
    )


def expired(image_id: str) -> str:
    return f"失効しました: {image_id}"
