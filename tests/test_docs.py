"""The README stays true: its CLI reference is the commands' current --help."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from scripts.cli_reference import README, rendered


def test_the_readme_cli_reference_and_settings_are_current() -> None:
    current = README.read_text()
    assert rendered(current) == current, "the README is stale: run `make docs`"


def test_every_setting_is_documented() -> None:
    from viewfinder.settings import Settings

    readme = README.read_text()
    for name, field in Settings.model_fields.items():
        assert field.description, f"setting {name} has no description"
        assert f"`VIEWFINDER_{name.upper()}`" in readme


def test_the_readme_example_output_is_what_the_command_prints(tmp_path: Path) -> None:
    readme = README.read_text()
    expected = re.search(r"```text\n(changed: .*?)```", readme, re.S)
    assert expected, "the README's example output block is missing"
    exe = Path(sys.executable).with_name("viewfinder")
    examples = README.parent / "docs" / "examples"
    out = tmp_path / "diff.png"
    run = subprocess.run(
        [exe, "diff", examples / "before.png", examples / "after.png", "--out", out],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1
    assert run.stdout.replace(str(out), "diff.png") == expected.group(1)
