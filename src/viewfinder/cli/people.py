"""`viewfinder users` and `viewfinder projects`: accounts and projects, made on the server's
machine from its data directory (no key needed; the server may be running or not). Passwords
are typed at a hidden prompt, or read from standard input with --password-stdin, and never
printed."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from viewfinder.cli.local import DataDirOption, database_name, settings_for
from viewfinder.cli.output import fail, fail_on, print_json
from viewfinder.cli.render import table
from viewfinder.errors import ViewfinderError

if TYPE_CHECKING:
    from viewfinder.services.env import Env

users = typer.Typer(help="Make accounts and reset their passwords.", no_args_is_help=True)
projects = typer.Typer(help="Make and list projects, and put people in them.", no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print the record as JSON.")]
PasswordStdin = Annotated[
    bool,
    typer.Option("--password-stdin", help="Read the password from standard input (for scripts)."),
]


@contextlib.contextmanager
def local_env(data_dir: Path) -> Iterator[Env]:
    """The data directory's Env; exits 2 with the reason when it cannot be opened."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import SQLAlchemyError

    from viewfinder.services.env import Env

    settings = settings_for(data_dir)
    embedded = make_url(settings.resolved_database_url)
    if embedded.get_backend_name() == "sqlite" and not Path(embedded.database or "").is_file():
        fail(
            f"no Viewfinder database in {data_dir}: pass the --data-dir `viewfinder serve` "
            "uses, or start it once there"
        )
    try:
        env = Env.open(settings)
    except SQLAlchemyError as exc:
        fail(f"cannot open the database {database_name(settings)}: {exc.__cause__ or exc}")
    try:
        yield env
    except ViewfinderError as exc:
        fail_on(exc)
    finally:
        env.close()


def _password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    value: str = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    return value


@users.command("create")
def create_user(
    email: Annotated[str, typer.Argument(help="The person's email; they sign in with it.")],
    name: Annotated[
        str | None, typer.Option(help="Their name as others see it; default: the email's name.")
    ] = None,
    owner: Annotated[
        bool, typer.Option("--owner", help="An owner: creates projects and runs the server.")
    ] = False,
    password_stdin: PasswordStdin = False,
    data_dir: DataDirOption = Path(".viewfinder"),
    as_json: JsonFlag = False,
) -> None:
    """Make an account. An owner becomes an admin of every project there is."""
    from viewfinder.services import people

    password = _password(password_stdin)
    with local_env(data_dir) as env:
        made = people.create_person(env, email, name or email.split("@")[0], password, owner=owner)
    if as_json:
        print_json(made.model_dump(mode="json"))
        return
    what = "owner" if made.is_owner else "account"
    typer.echo(f"{what} {made.email} ({made.name}) made: sign in at the dashboard's /login")


@users.command("reset-password")
def reset_password(
    email: Annotated[str, typer.Argument(help="The account's email.")],
    password_stdin: PasswordStdin = False,
    data_dir: DataDirOption = Path(".viewfinder"),
) -> None:
    """Set a new password for an account (it is never shown)."""
    from viewfinder.services import people

    password = _password(password_stdin)
    with local_env(data_dir) as env:
        done = people.reset_password(env, email, password)
    typer.echo(f"the password of {done.email} is changed; tell them through a safe channel")


@users.command("list")
def list_users(data_dir: DataDirOption = Path(".viewfinder"), as_json: JsonFlag = False) -> None:
    """List the accounts."""
    from viewfinder.services import people

    with local_env(data_dir) as env:
        found = people.list_people(env)
    if as_json:
        print_json([p.model_dump(mode="json") for p in found])
        return
    table(
        ("EMAIL", "NAME", "OWNER", "CREATED"),
        [
            [p.email, p.name, "owner" if p.is_owner else "", p.created_at.isoformat()[:19]]
            for p in found
        ],
    )


@projects.command("create")
def create_project(
    name: Annotated[str, typer.Argument(help="The new project's name.")],
    data_dir: DataDirOption = Path(".viewfinder"),
    as_json: JsonFlag = False,
) -> None:
    """Make a project (then: viewfinder projects add-member, viewfinder keys create)."""
    from viewfinder.services import teams

    with local_env(data_dir) as env:
        made = teams.create_project(env, None, name)
    if as_json:
        print_json(made.model_dump(mode="json"))
        return
    typer.echo(f"project {made.name} ({made.id}) made. Next:")
    typer.echo(f"  viewfinder projects add-member {made.name} EMAIL --role admin")
    typer.echo(f"  viewfinder keys create --project {made.name} --role upload --kind ci")


@projects.command("list")
def list_projects(data_dir: DataDirOption = Path(".viewfinder"), as_json: JsonFlag = False) -> None:
    """List every project of the server."""
    from viewfinder.services import teams

    with local_env(data_dir) as env:
        found = teams.all_projects(env)
    if as_json:
        print_json([p.model_dump(mode="json") for p in found])
        return
    table(
        ("ID", "NAME", "ARCHIVED", "CREATED"),
        [
            [p.id, p.name, "archived" if p.archived else "", p.created_at.isoformat()[:19]]
            for p in found
        ],
    )


@projects.command("rename")
def rename_project(
    project: Annotated[str, typer.Argument(help="Project id or name.")],
    name: Annotated[str, typer.Argument(help="Its new name.")],
    data_dir: DataDirOption = Path(".viewfinder"),
) -> None:
    """Rename a project."""
    from viewfinder.services import teams

    with local_env(data_dir) as env:
        done = teams.update_project(env, None, project, name=name)
    typer.echo(f"project {done.id} is now called {done.name}")


@projects.command("archive")
def archive_project(
    project: Annotated[str, typer.Argument(help="Project id or name.")],
    restore: Annotated[
        bool, typer.Option("--restore", help="Bring an archived project back instead.")
    ] = False,
    data_dir: DataDirOption = Path(".viewfinder"),
) -> None:
    """Archive a project: it keeps its data, but no person, key or token reaches it."""
    from viewfinder.services import teams

    with local_env(data_dir) as env:
        done = teams.update_project(env, None, project, archived=not restore)
    typer.echo(f"project {done.name} is {'archived' if done.archived else 'back'}")


@projects.command("add-member")
def add_member(
    project: Annotated[str, typer.Argument(help="Project id or name.")],
    email: Annotated[str, typer.Argument(help="The account's email.")],
    role: Annotated[
        list[str],
        typer.Option(
            "--role", metavar="ROLE", help="upload, review, approve or admin (repeatable)."
        ),
    ],
    data_dir: DataDirOption = Path(".viewfinder"),
) -> None:
    """Put an account into a project with these roles (replacing the roles it had there)."""
    from viewfinder.services import teams

    with local_env(data_dir) as env:
        teams.add_member_locally(env, project, email, list(role))
    typer.echo(f"{email} is a member of {project} with the roles {', '.join(role)}")
