"""Write the README's CLI reference from the commands' own --help (run by `make docs`).

tests/test_docs.py fails when the README is out of date, so the reference never drifts.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- cli-reference:start -->", "<!-- cli-reference:end -->"
COMMANDS = [["diff"]]


def help_text(command: list[str]) -> str:
    env = {**os.environ, "COLUMNS": "100", "TERM": "dumb", "NO_COLOR": "1"}
    exe = Path(sys.executable).with_name("viewfinder")
    out = subprocess.run(
        [str(exe), *command, "--help"], capture_output=True, text=True, env=env, check=True
    )
    return out.stdout.rstrip()


def reference() -> str:
    parts = [f"### `viewfinder {' '.join(c)}`\n\n```text\n{help_text(c)}\n```" for c in COMMANDS]
    return "\n\n".join(parts)


def rendered(readme: str) -> str:
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{reference()}\n{END}{tail}"


if __name__ == "__main__":
    README.write_text(rendered(README.read_text()))
