"""`viewfinder capture`: screenshots of a page, an HTML email or a PDF on this machine, with
their DOM, boxes and what the second opinion finds on them; no server needed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from viewfinder.cli.local import settings_for
from viewfinder.cli.output import fail, fail_on, print_json
from viewfinder.errors import ViewfinderError
from viewfinder.fsutil import write_atomic

if TYPE_CHECKING:
    from viewfinder.capture import Finding, Policy, ReviewType, Shot

_TYPES = {"url": "website", "html": "email", "pdf": "presentation"}


def _kind(source: str) -> str:
    """url, html or pdf; exit 2 for anything else."""
    lowered = source.strip().lower()
    if lowered.startswith(("http://", "https://")):
        return "url"
    path = Path(source)
    if path.suffix.lower() in (".html", ".htm"):
        return "html"
    if path.suffix.lower() == ".pdf":
        return "pdf"
    if ":" in lowered.split("/", 1)[0] and not path.exists():
        fail(
            f"{source[:200]} is not an http:// or https:// address; file:, data: and other "
            "schemes are not captured (give a local file by its path)"
        )
    fail(f"{source[:200]} is not a URL (http or https), an .html file or a .pdf file")


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        fail(f"{path} does not exist")
    except IsADirectoryError:
        fail(f"{path} is a directory, not a file")
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror}")


def _shots(kind: str, source: str, policy: Policy, mobile: bool, full_page: bool) -> list[Shot]:
    from viewfinder.capture import DESKTOP, MOBILE, capture_html, capture_url, render_pdf

    if kind == "url":
        viewport = MOBILE if mobile else DESKTOP
        return capture_url(
            source, policy=policy, viewports=[viewport], full_page=full_page, on_failure="raise"
        )
    data = _read(Path(source))
    if kind == "pdf":
        return render_pdf(data, policy=policy, on_failure="raise")
    try:
        html = data.decode("utf-8")
    except UnicodeDecodeError:
        fail(f"{source} is not UTF-8 text; save the email as UTF-8")
    return capture_html(html, policy=policy, mobile=mobile, on_failure="raise")


def capture(
    source: Annotated[
        str,
        typer.Argument(
            help="A web page (http:// or https://), an HTML email file, or a PDF file.",
            metavar="URL|FILE.html|FILE.pdf",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", help="Folder to write the shots and their JSON into.", metavar="DIR"),
    ],
    mobile: Annotated[
        bool,
        typer.Option(
            "--mobile",
            help="A phone instead of a desktop: 375x812 CSS px at device scale 2 (a page), or "
            "375 px wide (an email).",
        ),
    ] = False,
    full_page: Annotated[
        bool,
        typer.Option(
            "--full-page",
            help="A page's whole length, not its first screen (cut at "
            "VIEWFINDER_CAPTURE_MAX_HEIGHT). Emails are always captured whole.",
        ),
    ] = False,
    allow: Annotated[
        list[str] | None,
        typer.Option(
            help="Capture this host although it is not a public address, e.g. localhost:3000 "
            "(repeatable; adds to VIEWFINDER_CAPTURE_ALLOW).",
            metavar="HOST[:PORT]",
        ),
    ] = None,
    review_type: Annotated[
        str | None,
        typer.Option(
            "--type",
            help="The second opinion's lens: ui, website, presentation or email (default: "
            "website for a URL, email for HTML, presentation for a PDF).",
            metavar="TYPE",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print what was written as one JSON object.")
    ] = False,
) -> None:
    """Capture a page, an email or a PDF with the server's engine and write, for each shot,
    LABEL.png, LABEL.dom.json (the DOM snapshot) and LABEL.boxes.json (the laid-out
    elements and accessibility violations), plus findings.json (the second opinion).

    Exit 0 when written, 2 on bad input, a refused address or a failed capture."""
    kind = _kind(source)
    if kind == "pdf" and mobile:
        fail("--mobile applies to pages and emails, not to a PDF")
    if kind != "url" and full_page:
        fail("--full-page applies to pages: emails and PDF pages are always captured whole")
    from viewfinder.capture import REVIEW_TYPES, Policy, second_opinion

    lens = review_type or _TYPES[kind]
    if lens not in REVIEW_TYPES:
        fail(f"--type {lens!r} is not one of {', '.join(REVIEW_TYPES)}")
    try:
        policy = Policy.from_settings(settings_for(None), allow=allow or [])
        shots = _shots(kind, source, policy, mobile, full_page)
        findings = second_opinion(shots, lens)
    except ViewfinderError as exc:
        fail_on(exc)
    written = _write(out, shots, findings)
    if as_json:
        print_json(
            {
                "shots": [s.meta() | {"files": written[s.label]} for s in shots],
                "findings": [f.to_dict() for f in findings],
                "findings_file": str(out / "findings.json"),
            }
        )
        return
    _print(shots, findings, written, out, lens)


def _write(out: Path, shots: list[Shot], findings: list[Finding]) -> dict[str, list[str]]:
    try:
        out.mkdir(parents=True, exist_ok=True)
        written: dict[str, list[str]] = {}
        for shot in shots:
            files = {f"{shot.label}.png": shot.png, f"{shot.label}.boxes.json": shot.boxes_json()}
            if shot.dom is not None:
                files[f"{shot.label}.dom.json"] = shot.dom
            for name, data in files.items():
                write_atomic(out / name, data)
            written[shot.label] = [str(out / name) for name in files]
        document: list[dict[str, Any]] = [f.to_dict() for f in findings]
        write_atomic(out / "findings.json", json.dumps(document, indent=2).encode())
    except OSError as exc:
        fail(f"cannot write into {out}: {exc.strerror or exc}")
    return written


def _print(
    shots: list[Shot],
    findings: list[Finding],
    written: dict[str, list[str]],
    out: Path,
    lens: ReviewType,
) -> None:
    for shot in shots:
        size = f"{shot.width}x{shot.height}"
        scale = f" at device scale {shot.scale:g}" if shot.scale != 1 else ""
        typer.echo(f"{shot.label}: {size} px{scale}, {len(shot.boxes)} boxes")
        for path in written[shot.label]:
            typer.echo(f"  wrote {path}")
        for line in (*shot.notes, *(f"blocked {b}" for b in shot.blocked)):
            typer.echo(f"  note: {line}")
    typer.echo(f"second opinion ({lens}): {len(findings)} findings, in {out / 'findings.json'}")
    for finding in findings:
        where = ""
        if finding.area is not None:
            a = finding.area
            where = f" at ({a.x:.2f}, {a.y:.2f}, {a.w:.2f}, {a.h:.2f})"
        typer.echo(f"  {finding.severity} {finding.rule} on {finding.label}{where}: {finding.body}")
