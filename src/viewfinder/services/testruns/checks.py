"""A test run's non-visual checks, each with a Markdown report.

Built in (written when the run completes, from its head replays): ``console-errors``,
``failed-requests``, ``unrecorded-requests`` (calls the recording never saw) and
``uncaught-exceptions``. Custom checks are CI's: ``expect_checks`` declares them (processing
until reported), ``report_check`` posts a result (complete with its Markdown, or failed with
a reason)."""

from __future__ import annotations

import re
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from viewfinder.errors import Conflict, InvalidInput, NotFound
from viewfinder.ids import new_id
from viewfinder.services import permissions
from viewfinder.services.env import Actor, Env
from viewfinder.services.records import Record
from viewfinder.services.testruns.runs import get_run_row
from viewfinder.services.text import check_text
from viewfinder.store.models import utcnow
from viewfinder.store.replay_models import Replay, ReplayDiff, ReplayRun, ReplayRunCheck

BUILTIN: dict[str, tuple[str, str]] = {
    # check id: (the replay fact it reads, what a finding is called)
    "console-errors": ("consoleErrors", "Console errors"),
    "failed-requests": ("failedRequests", "Failed requests"),
    "unrecorded-requests": ("unrecorded", "Requests the recording never saw"),
    "uncaught-exceptions": ("exceptions", "Uncaught exceptions"),
}
CHECK_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")
INLINE_MAX = 20_000


class CheckResult(Record):
    status: Literal["processing", "complete", "failed"]
    text: str | None = None
    url: str | None = None
    reason: str | None = None


def write_builtin(s: Session, run: ReplayRun) -> None:
    """The built-in checks of a head run, from the facts of its head replays."""
    found: dict[str, list[tuple[str, str]]] = {check: [] for check in BUILTIN}
    for diff in s.scalars(select(ReplayDiff).where(ReplayDiff.test_run_id == run.id)):
        head = s.get(Replay, diff.head_replay_id)
        if head is None:
            continue
        for check, (fact, _) in BUILTIN.items():
            found[check].extend((diff.session_id, item) for item in head.facts.get(fact, []))
    for check, (_, title) in BUILTIN.items():
        items = found[check]
        lines = [f"## {title}", ""]
        if not items:
            lines.append(f"None in {len(run.session_ids)} replayed sessions.")
        else:
            lines.append(f"{len(items)} in {len({sid for sid, _ in items})} sessions:")
            lines.append("")
            lines.extend(f"- `{sid}`: {_md(item)}" for sid, item in items)
        s.add(
            ReplayRunCheck(
                id=new_id("chk"),
                project_id=run.project_id,
                test_run_id=run.id,
                check_id=check,
                check_type="builtin",
                state="complete",
                text="\n".join(lines) + "\n",
                reported_at=utcnow(),
            )
        )


def _md(text: str) -> str:
    return text.replace("\n", " ").replace("`", "'")[:500]


def _check_type(value: Any) -> str:
    if value not in ("builtin", "custom"):
        raise InvalidInput("checkType is builtin or custom", field="checkType")
    return str(value)


def get_check(
    env: Env, actor: Actor, test_run_id: str, check_id: str, check_type: str = "builtin"
) -> CheckResult:
    """A check's report: processing until it has reported. Raises NotFound, InvalidInput."""
    permissions.require(actor, "read_test_runs")
    kind = _check_type(check_type)
    with env.db.read() as s:
        run = get_run_row(s, actor, test_run_id)
        row = s.scalar(
            select(ReplayRunCheck).where(
                ReplayRunCheck.test_run_id == run.id,
                ReplayRunCheck.check_type == kind,
                ReplayRunCheck.check_id == check_id,
            )
        )
        if row is None:
            if kind == "builtin" and check_id in BUILTIN and run.state == "processing":
                return CheckResult(status="processing")
            if kind == "custom":
                raise Conflict(
                    f"test run {test_run_id} is not expecting custom check {check_id!r} "
                    "(CI declares its checks separately; retry in a minute, or list them "
                    "with get_test_run_check_available_ids)"
                )
            raise NotFound(
                f"no {kind} check {check_id!r} for test run {test_run_id}; built-in ones are "
                f"{', '.join(BUILTIN)}"
            )
        if row.state == "processing":
            return CheckResult(status="processing")
        if row.state == "failed":
            return CheckResult(status="failed", reason=row.reason)
        text = row.text or ""
        if len(text) > INLINE_MAX:
            return CheckResult(
                status="complete",
                text=text[:INLINE_MAX] + "\n\n(the report is longer; this is its beginning)",
            )
        return CheckResult(status="complete", text=text)


def available_ids(env: Env, actor: Actor, test_run_id: str) -> dict[str, list[str]]:
    """The checks that have reported for a run so far, by type."""
    permissions.require(actor, "read_test_runs")
    with env.db.read() as s:
        run = get_run_row(s, actor, test_run_id)
        rows = s.scalars(
            select(ReplayRunCheck)
            .where(ReplayRunCheck.test_run_id == run.id, ReplayRunCheck.state != "processing")
            .order_by(ReplayRunCheck.check_type, ReplayRunCheck.check_id)
        )
        out: dict[str, list[str]] = {"builtin": [], "custom": []}
        for row in rows:
            out[row.check_type].append(row.check_id)
        return out


def _custom_id(check_id: Any) -> str:
    if not isinstance(check_id, str) or not CHECK_ID.match(check_id):
        raise InvalidInput(
            "a check id is 1-80 characters of a-z, 0-9, '.', '_' and '-', starting with a "
            "letter or digit",
            field="checkId",
        )
    return check_id


def expect_checks(env: Env, actor: Actor, test_run_id: str, check_ids: list[str]) -> list[str]:
    """Declare the custom checks CI will report for a run (processing until reported)."""
    permissions.require(actor, "report_check")
    wanted = [_custom_id(c) for c in check_ids]
    with env.db.write() as s:
        run = get_run_row(s, actor, test_run_id)
        have = set(
            s.scalars(
                select(ReplayRunCheck.check_id).where(
                    ReplayRunCheck.test_run_id == run.id, ReplayRunCheck.check_type == "custom"
                )
            )
        )
        for check_id in dict.fromkeys(wanted):
            if check_id not in have:
                s.add(
                    ReplayRunCheck(
                        id=new_id("chk"),
                        project_id=run.project_id,
                        test_run_id=run.id,
                        check_id=check_id,
                        check_type="custom",
                    )
                )
        return wanted


def report_check(
    env: Env,
    actor: Actor,
    test_run_id: str,
    check_id: str,
    *,
    text: str | None = None,
    failed_reason: str | None = None,
) -> CheckResult:
    """CI reports a custom check: its Markdown report, or why it could not run."""
    permissions.require(actor, "report_check")
    check = _custom_id(check_id)
    if (text is None) == (failed_reason is None):
        raise InvalidInput("report either the check's Markdown (text) or why it failed (reason)")
    body = check_text("a check's report", text, maximum=1_000_000) if text is not None else None
    reason = (
        check_text("a check's failure reason", failed_reason, maximum=2000)
        if failed_reason is not None
        else None
    )
    with env.db.write() as s:
        run = get_run_row(s, actor, test_run_id)
        row = s.scalar(
            select(ReplayRunCheck).where(
                ReplayRunCheck.test_run_id == run.id,
                ReplayRunCheck.check_type == "custom",
                ReplayRunCheck.check_id == check,
            )
        )
        if row is None:
            row = ReplayRunCheck(
                id=new_id("chk"),
                project_id=run.project_id,
                test_run_id=run.id,
                check_id=check,
                check_type="custom",
            )
            s.add(row)
        row.state = "complete" if body is not None else "failed"
        row.text, row.reason = body, reason
        row.reported_at = utcnow()
        return CheckResult(status=row.state, text=body, reason=reason)
