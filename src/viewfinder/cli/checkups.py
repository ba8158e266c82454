"""`viewfinder checkup`: open a design checkup from screenshots, a page, a PDF or an email,
read it, list them, report marks resolved, and set the project's monthly credits."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from viewfinder.cli.client import DEFAULT_URL, Client, JsonOption, KeyOption, UrlOption, segment
from viewfinder.cli.output import fail, print_json

app = typer.Typer(
    help="Design checkups: a person marks, the agent fixes, pass by pass.", no_args_is_help=True
)


def _local(value: str, what: str) -> str:
    """A file given on this machine as base64; URLs (https, data) as they are."""
    if value.startswith(("https://", "http://", "data:")):
        return value
    path = Path(value)
    if not path.is_file():
        fail(f"{what} {value!r} is neither a file nor an https or data URL")
    return base64.b64encode(path.read_bytes()).decode()


def _show(review: dict[str, Any]) -> None:
    action = review["next_action"]
    typer.echo(f"{review['id']}  pass {review['pass']}  {review['status']}  {review['title']}")
    typer.echo(f"  review_url  {review['review_url']}")
    typer.echo(f"  next        {action['action']}: {action['summary']}")
    loop = review["loop"]
    typer.echo(
        f"  marks       {loop['outstanding']} outstanding ({loop['must_fix']} must-fix, "
        f"{loop['nits']} nits, {loop['questions']} questions), "
        f"{loop['awaiting_verification']} awaiting verification"
    )
    if review["capture"]["state"] != "none":
        reason = review["capture"]["reason"]
        typer.echo(
            f"  capture     {review['capture']['state']}" + (f": {reason}" if reason else "")
        )
    for shot in review["screenshots"]:
        typer.echo(
            f"  [{shot['index']}] {shot['label']}  {shot['width']}x{shot['height']}  "
            f"{shot['meta']['origin']}"
        )
    for pin in review["work_packets"]["pins"]:
        typer.echo(
            f"  {pin['number']:>4} {pin['severity']:<9} {pin['status']:<11} "
            f"{pin['body'][:70]}  ({pin['id']})"
        )
        if pin.get("pass_diff"):
            typer.echo(f"       {pin['pass_diff']['summary']}")
    hints = review["work_packets"]["second_opinion"]
    if hints:
        typer.echo(f"  {len(hints)} second-opinion hint(s)")


@app.command("create")
def create(
    title: Annotated[str, typer.Option(help="Short title for this pass.")],
    image: Annotated[
        list[str] | None,
        typer.Option(
            "--image", help="A screenshot file or URL (repeatable, 1-5).", show_default=False
        ),
    ] = None,
    page: Annotated[
        str | None,
        typer.Option(
            "--url", help="Capture this page at desktop and mobile size.", show_default=False
        ),
    ] = None,
    pdf: Annotated[str | None, typer.Option(help="A PDF file or URL.", show_default=False)] = None,
    html: Annotated[
        Path | None, typer.Option(help="An email's HTML file.", show_default=False)
    ] = None,
    context: Annotated[str | None, typer.Option(help="What to look at.")] = None,
    kind: Annotated[
        Literal["ui", "website", "presentation", "email"] | None,
        typer.Option("--type", help="Defaults from the source.", show_default=False),
    ] = None,
    parent: Annotated[
        str | None,
        typer.Option(
            help="The pass before (rev_...), after changes were requested.", show_default=False
        ),
    ] = None,
    webhook: Annotated[
        str | None, typer.Option(help="https URL POSTed review.decided.", show_default=False)
    ] = None,
    full_page: Annotated[bool, typer.Option(help="Capture the whole page.")] = False,
    wait: Annotated[float, typer.Option(help="Seconds to wait for a capture.")] = 60.0,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Open a review from exactly one source and print the link to share."""
    body: dict[str, Any] = {"title": title, "full_page": full_page}
    if image:
        body["images"] = [_local(i, "--image") for i in image]
    if page:
        body["capture_url"] = True
        body["page_url"] = page
    if pdf:
        body["pdf"] = _local(pdf, "--pdf")
    if html:
        if not html.is_file():
            fail(f"--html {html} is not a file")
        body["html"] = html.read_text()
    optional = {"context": context, "type": kind, "parent_id": parent, "webhook_url": webhook}
    body |= {name: value for name, value in optional.items() if value is not None}
    with Client(url, key) as client:
        review = client.post("/reviews", body, wait=wait)
    if as_json:
        print_json(review)
    else:
        _show(review)


@app.command("get")
def get(
    review_id: Annotated[str, typer.Argument(metavar="REVIEW", help="The review id (rev_...).")],
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """A review: status, next action, screenshots and marks."""
    with Client(url, key) as client:
        review = client.get(f"/reviews/{segment(review_id)}")
    if as_json:
        print_json(review)
    else:
        _show(review)


@app.command("list")
def list_(url: UrlOption = DEFAULT_URL, key: KeyOption = None, as_json: JsonOption = False) -> None:
    """The reviews this key opened, newest first."""
    with Client(url, key) as client:
        listed = client.get("/reviews")
    if as_json:
        print_json(listed)
        return
    for r in listed["reviews"]:
        typer.echo(
            f"{r['id']}  pass {r['pass']}  {r['status']:<17} {r['next_action']['action']:<25}"
            f" {r['outstanding']} outstanding  {r['title']}"
        )


@app.command("resolve")
def resolve(
    review_id: Annotated[str, typer.Argument(metavar="REVIEW", help="The review id (rev_...).")],
    marks: Annotated[list[str], typer.Argument(metavar="MARK...", help="Mark ids (cmt_...).")],
    note: Annotated[str | None, typer.Option(help="What you changed.")] = None,
    after: Annotated[
        str | None,
        typer.Option(help="A screenshot of the fixed area (file or URL).", show_default=False),
    ] = None,
    in_progress: Annotated[bool, typer.Option(help="Mark them in progress instead.")] = False,
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Report marks resolved (or in progress); the person verifies them."""
    item: dict[str, Any] = {"status": "in_progress" if in_progress else "resolved"}
    if note:
        item["note"] = note
    if after:
        item["after_image"] = _local(after, "--after")
    with Client(url, key) as client:
        result = client.post(
            f"/reviews/{segment(review_id)}/resolve", {"marks": [{"id": m, **item} for m in marks]}
        )
    if as_json:
        print_json(result)
        return
    for u in result["updated"]:
        typer.echo(f"updated {u['number']}: {u['summary']}")
    for s in result["skipped"]:
        typer.echo(f"skipped {s['id']}: {s['reason']}")
    typer.echo(f"next: {result['next_action']['action']}: {result['next_action']['summary']}")


@app.command("resume-webhook")
def resume_webhook(
    review_id: Annotated[str, typer.Argument(metavar="REVIEW", help="The review id (rev_...).")],
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Resume a webhook that five failures in a row paused, once its receiver works again."""
    with Client(url, key) as client:
        review = client.post(f"/reviews/{segment(review_id)}/webhook/resume")
    if as_json:
        print_json(review)
    else:
        typer.echo(f"webhook of {review['id']} resumed: {review['webhook']['url']}")


@app.command("allowance")
def allowance(
    credits: Annotated[str, typer.Argument(metavar="CREDITS", help="Credits a month, or none.")],
    url: UrlOption = DEFAULT_URL,
    key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Set the project's monthly checkup credits (admin key); none for no limit."""
    value: int | None
    if credits.lower() in ("none", "unlimited"):
        value = None
    elif credits.isdigit():
        value = int(credits)
    else:
        fail("CREDITS is a whole number, or none for no limit")
    with Client(url, key) as client:
        billing = client.request("PUT", "/project/checkup-allowance", body={"allowance": value})
    if as_json:
        print_json(billing)
    else:
        left = "no limit" if billing["allowance"] is None else f"{billing['remaining']} left"
        typer.echo(f"allowance {billing['allowance']}: {billing['used']} used, {left}")
