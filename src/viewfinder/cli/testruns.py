"""`viewfinder test-run`: replay recorded sessions on a deployment against a base commit and
read what differs (screenshots, DOM, timeline, coverage); `viewfinder feedback` for admins."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from viewfinder.cli.client import (
    DEFAULT_URL,
    Client,
    JsonOption,
    KeyOption,
    UrlOption,
    segment,
)
from viewfinder.cli.output import fail, print_json

app = typer.Typer(help="Session replays: test runs and their differences.", no_args_is_help=True)

RunArgument = Annotated[str, typer.Argument(metavar="RUN", help="The test run (trn_...).")]
ReplayDiffArgument = Annotated[
    str, typer.Argument(metavar="REPLAY_DIFF", help="The replay diff (rdf_...).")
]
ScreenshotArgument = Annotated[
    str, typer.Argument(metavar="SCREENSHOT", help="end-state or after-event-N.")
]


@app.command("trigger")
def trigger(
    base: Annotated[str, typer.Option("--base", metavar="SHA", help="The base commit.")],
    deployment: Annotated[
        str | None, typer.Option("--deployment", metavar="ID", help="The deployment to test.")
    ] = None,
    commit: Annotated[
        str | None, typer.Option("--commit", metavar="SHA", help="Or a commit's latest one.")
    ] = None,
    git_diff: Annotated[
        Path | None,
        typer.Option(
            "--git-diff",
            metavar="FILE",
            help="`git diff` output: replay only the sessions covering its lines ('-': stdin).",
            allow_dash=True,
        ),
    ] = None,
    session: Annotated[
        list[str] | None, typer.Option("--session", metavar="ID", help="A session (repeat).")
    ] = None,
    pr: Annotated[
        int | None,
        typer.Option(
            "--pr", metavar="N", help="The pull request it tests (only then can diffs be rejected)."
        ),
    ] = None,
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait until the run completes and print its diffs.")
    ] = False,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Start a test run; prints its id at once (or, with --wait, its diffs once complete)."""
    diff_text = None
    if git_diff is not None:
        diff_text = (
            typer.get_text_stream("stdin").read() if str(git_diff) == "-" else git_diff.read_text()
        )
    body: dict[str, Any] = {
        "deployment_id": deployment,
        "commit_sha": commit,
        "base_sha": base,
        "git_diff_output": diff_text,
        "session_ids": session or None,
        "pr_number": pr,
    }
    with Client(url, key) as client:
        started = client.post("/test-runs", {k: v for k, v in body.items() if v is not None})
        if not wait:
            if as_json:
                print_json(started)
            else:
                typer.echo(
                    f"test run {started['testRunId']}: {len(started['sessionIds'])} session(s) "
                    f"({started['selection']}), processing"
                )
            return
        found = _until_done(client, started["testRunId"])
    _show_diffs(found, as_json)


def _until_done(client: Client, run_id: str, seconds: float = 1800.0) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        found: dict[str, Any] = client.get(f"/test-runs/{segment(run_id)}/diffs")
        if found["status"] != "processing" or time.monotonic() > deadline:
            return found
        time.sleep(1.0)


def _show_diffs(found: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(found)
        return
    if found["status"] == "processing":
        typer.echo("processing: try again in a minute")
        return
    if found["status"] == "failed":
        fail(f"the test run failed: {found['reason']}")
    rows = found["diffs"]
    typer.echo(f"test run {found['testRunId']}: {len(rows)} difference(s)")
    for row in rows:
        typer.echo(f"  {row['replayDiffId']} {row['screenshotName']}: {row['outcome']}")


@app.command("diffs")
def diffs(
    run: RunArgument,
    all_diffs: Annotated[
        bool, typer.Option("--all", help="Every differing screenshot, not the subset.")
    ] = False,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """A run's screenshot diffs: one per distinct DOM change, likely regressions first."""
    with Client(url, key) as client:
        found = client.get(f"/test-runs/{segment(run)}/diffs", all_diffs=all_diffs or None)
    _show_diffs(found, as_json)


@app.command("dom-diff")
def dom_diff(
    replay_diff: ReplayDiffArgument,
    screenshot: ScreenshotArgument,
    context: Annotated[
        str, typer.Option("--context", metavar="N", help="Lines of context, or full.")
    ] = "3",
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """The DOM at a screenshot, base vs head, as [diff N] hunks."""
    with Client(url, key) as client:
        found = client.get(
            f"/replay-diffs/{segment(replay_diff)}/screenshots/{segment(screenshot)}/dom-diff",
            context=context,
        )
    if as_json:
        print_json(found)
    else:
        typer.echo(found["diff"] or "no DOM difference at this screenshot")


@app.command("timeline-diff")
def timeline_diff(
    replay_diff: ReplayDiffArgument,
    changes_only: Annotated[bool, typer.Option("--changes", help="Only rows that differ.")] = False,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """The two replays' timelines aligned, row by row."""
    with Client(url, key) as client:
        found = client.get(f"/replay-diffs/{segment(replay_diff)}/timeline-diff")
    rows = [r for r in found["rows"] if not changes_only or r["diff"] != "same"]
    if as_json:
        print_json({**found, "rows": rows})
        return
    marks = {"same": " ", "removed": "-", "added": "+", "changed": "~"}
    for row in rows:
        typer.echo(
            f"{marks[row['diff']]} {row['timeMs']:>7} ms  {row['event']:<10} {row['description']}"
        )


@app.command("coverage")
def coverage(
    run: Annotated[
        str | None, typer.Argument(metavar="RUN", help="The test run (trn_...).")
    ] = None,
    replay_diff: Annotated[
        str | None,
        typer.Option("--replay-diff", metavar="ID", help="Base vs head of one replay diff."),
    ] = None,
    glob: Annotated[str | None, typer.Option("--glob", help="Only files matching.")] = None,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """JavaScript coverage of a run per file, or (--replay-diff) its base vs head diff."""
    if (run is None) == (replay_diff is None):
        fail("give a test run, or --replay-diff ID")
    with Client(url, key) as client:
        if replay_diff is not None:
            found = client.get(f"/replay-diffs/{segment(replay_diff)}/coverage-diff", glob=glob)
        else:
            found = client.get(f"/test-runs/{segment(str(run))}/coverage", glob=glob)
    if as_json:
        print_json(found)
        return
    if found.get("status") == "processing":
        typer.echo("processing: try again in a minute")
        return
    for row in found["files"]:
        if "status" in row:
            names = ", ".join(f"{f['name']} {f['status']}" for f in row["functions"])
            typer.echo(f"{row['repoFilePath']}: {row['status']}" + (f" ({names})" if names else ""))
        else:
            pct = row.get("coveragePercentage")
            shown = f"{pct}%" if pct is not None else "-"
            typer.echo(
                f"{row['repoFilePath']}: {row['coveredLines']}/{row['executableLines']} lines "
                f"({shown}), {len(row['functions'])} function(s) ran"
            )


def feedback(
    limit: Annotated[int, typer.Option("--limit", min=1, max=1000)] = 50,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Feedback agents and people sent about Viewfinder, newest first (admin key)."""
    with Client(url, key) as client:
        found = client.get("/feedback", limit=limit)
    if as_json:
        print_json(found)
        return
    for item in found:
        who = f"{item['author']}" + (f" ({item['agent_name']})" if item["agent_name"] else "")
        outcome = f" [{item['outcome']}]" if item["outcome"] else ""
        typer.echo(f"{item['created_at'][:19]} {who}{outcome}: {item['message']}")
