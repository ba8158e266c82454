"""`viewfinder users` and `viewfinder projects` on a data directory: owners and accounts made
with passwords that are never printed, reset, projects made and listed, members added."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.server import VIEWFINDER, clean_environ
from viewfinder.services import people
from viewfinder.services.env import Env
from viewfinder.settings import Settings

PASSWORD = "correct horse battery"


def run(data_dir: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [VIEWFINDER, *args, "--data-dir", str(data_dir)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_environ(),
        check=False,
    )


def test_the_command_line_makes_owners_resets_passwords_and_makes_projects(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    Env.open(Settings(data_dir=data)).close()  # an empty, migrated server
    made = run(
        data,
        "users",
        "create",
        "ada@example.com",
        "--owner",
        "--password-stdin",
        stdin=PASSWORD + "\n",
    )
    assert made.returncode == 0, made.stderr
    assert "owner ada@example.com (ada) made" in made.stdout and PASSWORD not in made.stdout
    taken = run(
        data, "users", "create", "ada@example.com", "--password-stdin", stdin=PASSWORD + "\n"
    )
    assert taken.returncode == 2 and "has an account already" in taken.stderr
    short = run(data, "users", "create", "bo@example.com", "--password-stdin", stdin="short\n")
    assert short.returncode == 2 and "at least 10 characters" in short.stderr

    reset = run(
        data,
        "users",
        "reset-password",
        "ada@example.com",
        "--password-stdin",
        stdin="another long password\n",
    )
    assert reset.returncode == 0 and "another long password" not in reset.stdout
    env = Env.open(Settings(data_dir=data))
    try:
        assert people.sign_in(env, "ada@example.com", "another long password").is_owner
    finally:
        env.close()

    assert run(data, "projects", "create", "shop").returncode == 0
    listed = run(data, "projects", "list", "--json")
    assert [p["name"] for p in json.loads(listed.stdout)] == ["shop"]
    added = run(data, "projects", "add-member", "shop", "ada@example.com", "--role", "approve")
    assert added.returncode == 0, added.stderr
    assert run(data, "projects", "rename", "shop", "storefront").returncode == 0
    archived = run(data, "projects", "archive", "storefront")
    assert archived.returncode == 0 and "project storefront is archived" in archived.stdout
    listed = json.loads(run(data, "projects", "list", "--json").stdout)
    assert [(p["name"], p["archived"]) for p in listed] == [("storefront", True)]
    assert run(data, "projects", "archive", "storefront", "--restore").returncode == 0
    missing = run(
        data, "projects", "add-member", "storefront", "zed@example.com", "--role", "review"
    )
    assert missing.returncode == 2 and "nobody has the email zed@example.com" in missing.stderr
