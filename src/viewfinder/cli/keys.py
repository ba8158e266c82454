"""`viewfinder keys`: make a key on this machine from the data directory (no key needed, the
server may be running or not), or list the project's keys through the API (admin key)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from viewfinder.cli.client import DEFAULT_URL, Client, JsonOption, KeyOption, UrlOption
from viewfinder.cli.local import DataDirOption, database_name, settings_for
from viewfinder.cli.output import fail, fail_on, print_json
from viewfinder.cli.render import table
from viewfinder.errors import ViewfinderError

app = typer.Typer(help="Make and list API keys.", no_args_is_help=True)


@app.command("create")
def create(
    role: Annotated[
        list[str],
        typer.Option(
            "--role",
            metavar="ROLE",
            help="upload, review, approve or admin (repeatable); record alone for a recorder.",
            show_default=False,
        ),
    ],
    data_dir: DataDirOption = Path(".viewfinder"),
    project: Annotated[
        str | None,
        typer.Option(help="Project id or name; default: the only project.", show_default=False),
    ] = None,
    label: Annotated[str, typer.Option(help="What the key is for, to tell keys apart.")] = "",
    kind: Annotated[
        Literal["agent", "ci", "person"], typer.Option(help="Who uses the key.")
    ] = "person",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the new key's record as JSON.")
    ] = False,
) -> None:
    """Make an API key directly in the data directory (the secret is shown once)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import SQLAlchemyError

    from viewfinder.services import projects
    from viewfinder.services.env import Env

    settings = settings_for(data_dir)
    embedded = make_url(settings.resolved_database_url)
    if embedded.get_backend_name() == "sqlite" and not Path(embedded.database or "").is_file():
        # Opening would create an empty database there: most likely a mistyped --data-dir.
        fail(
            f"no Viewfinder database in {data_dir}: pass the --data-dir `viewfinder serve` "
            "uses, or start it once there"
        )
    try:
        env = Env.open(settings)
        try:
            new = projects.create_key(
                env, None, roles=list(role), label=label, kind=kind, project=project
            )
        finally:
            env.close()
    except ViewfinderError as exc:
        fail_on(exc)
    except SQLAlchemyError as exc:
        fail(f"cannot open the database {database_name(settings)}: {exc.__cause__ or exc}")
    if as_json:
        print_json(new.model_dump(mode="json"))
        return
    typer.echo(f"key {new.id} ({new.label}, {new.kind}), roles {','.join(new.roles)}:")
    typer.echo(f"  export VIEWFINDER_KEY={new.key}")
    typer.echo("It is shown only now; keep it somewhere safe.")


@app.command("list")
def list_keys(
    url: UrlOption = DEFAULT_URL, key: KeyOption = None, as_json: JsonOption = False
) -> None:
    """List the project's API keys (admin key)."""
    with Client(url, key) as client:
        keys = client.get("/keys")
    if as_json:
        print_json(keys)
        return
    table(
        ("ID", "PREFIX", "LABEL", "KIND", "ROLES", "CREATED", "REVOKED"),
        [
            [
                k["id"],
                k["prefix"],
                k["label"],
                k["kind"],
                ",".join(k["roles"]),
                k["created_at"][:19],
                "revoked" if k["revoked"] else "",
            ]
            for k in keys
        ],
    )
