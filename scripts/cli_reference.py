"""Write the README's generated parts (run by `make docs`): the CLI reference from the
commands' own --help, and the settings table from the Settings model.

tests/test_docs.py fails when the README is out of date, so neither ever drifts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- cli-reference:start -->", "<!-- cli-reference:end -->"
COMMANDS = [
    ["diff"],
    ["serve"],
    ["worker"],
    ["mcp"],
    ["keys", "create"],
    ["keys", "list"],
    ["users", "create"],
    ["users", "reset-password"],
    ["users", "list"],
    ["projects", "create"],
    ["projects", "list"],
    ["projects", "rename"],
    ["projects", "archive"],
    ["projects", "add-member"],
    ["upload"],
    ["builds"],
    ["build"],
    ["stories"],
    ["review"],
    ["accept-build"],
    ["approve"],
    ["show-diff"],
    ["comments", "list"],
    ["comments", "add"],
    ["comments", "reply"],
    ["comments", "update"],
    ["comments", "resolve"],
    ["comments", "delete"],
    ["baselines"],
    ["baselines", "delete"],
    ["push"],
    ["image"],
    ["close"],
    ["expire"],
    ["pr-comment"],
    ["usage"],
    ["capture"],
    ["github", "token"],
    ["github", "comment"],
    ["deploy"],
    ["sessions"],
    ["session"],
    ["test-run", "trigger"],
    ["test-run", "diffs"],
    ["test-run", "dom-diff"],
    ["test-run", "timeline-diff"],
    ["test-run", "coverage"],
    ["feedback"],
]


# Renders every command's help in one child process: a process per command costs close to a
# second each, and test_docs renders the reference on every test run.
_RENDER = """
import contextlib, io, json, sys
from typer.main import get_command
from viewfinder.main import build_app

command = get_command(build_app())
texts = []
for args in json.loads(sys.argv[1]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        command.main([*args, "--help"], prog_name="viewfinder", standalone_mode=False)
    texts.append(out.getvalue().rstrip())
print(json.dumps(texts))
"""


def help_texts(commands: list[list[str]]) -> list[str]:
    # Without the user's VIEWFINDER_* settings, so the reference reads the same on every machine.
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIEWFINDER_")}
    env |= {"COLUMNS": "100", "TERM": "dumb", "NO_COLOR": "1"}
    out = subprocess.run(
        [sys.executable, "-c", _RENDER, json.dumps(commands)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    texts: list[str] = json.loads(out.stdout)
    return texts


def reference() -> str:
    parts = [
        f"### `viewfinder {' '.join(c)}`\n\n```text\n{text}\n```"
        for c, text in zip(COMMANDS, help_texts(COMMANDS), strict=True)
    ]
    return "\n\n".join(parts)


SETTINGS_START, SETTINGS_END = "<!-- settings:start -->", "<!-- settings:end -->"


def settings_table() -> str:
    from viewfinder.settings import Settings

    rows = ["| variable | default | what it does |", "| --- | --- | --- |"]
    for name, field in Settings.model_fields.items():
        default = field.default
        shown = "unset" if default is None else f"`{default}`"
        rows.append(f"| `VIEWFINDER_{name.upper()}` | {shown} | {field.description} |")
    return "\n".join(rows)


def _replace(text: str, start: str, end: str, body: str) -> str:
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{body}\n{end}{tail}"


def rendered(readme: str) -> str:
    readme = _replace(readme, START, END, reference())
    return _replace(readme, SETTINGS_START, SETTINGS_END, settings_table())


if __name__ == "__main__":
    README.write_text(rendered(README.read_text()))
