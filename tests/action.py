"""Run the steps of the repository's action.yml as GitHub's runner would, for the expressions
it uses: ``${{ inputs.NAME }}``, ``${{ github.PATH }}`` and ``a || b``. Each step's script runs
in bash with the step's env, the inputs' defaults applied, and the runner's own variables."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.server import clean_environ

ROOT = Path(__file__).resolve().parent.parent
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _lookup(path: str, context: dict[str, Any]) -> Any:
    if path.startswith(("'", '"')):
        return path[1:-1]
    value: Any = context
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def evaluate(text: str, context: dict[str, Any]) -> str:
    def one(match: re.Match[str]) -> str:
        for option in match.group(1).split("||"):
            value = _lookup(option.strip(), context)
            if value not in (None, "", False):
                return str(value).lower() if isinstance(value, bool) else str(value)
        return ""

    return EXPRESSION.sub(one, text)


def run_action(
    inputs: dict[str, str], github: dict[str, Any], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """Every step in order, stopping at the first that fails; stdout and stderr together."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    context: dict[str, Any] = {"github": github}
    given = {}
    for name, spec in action["inputs"].items():
        if name in inputs:
            given[name] = inputs[name]
        elif spec.get("required"):
            raise AssertionError(f"the workflow must give input {name!r}")
        else:
            given[name] = evaluate(str(spec.get("default", "")), context)
    context["inputs"] = given
    bin_dir = str(Path(os.sys.executable).parent)
    runner = {
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_REPOSITORY": github["repository"],
        "GITHUB_API_URL": github["api_url"],
        "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}",
    }
    output = []
    for step in action["runs"]["steps"]:
        step_env = {k: evaluate(str(v), context) for k, v in (step.get("env") or {}).items()}
        done = subprocess.run(
            [
                "bash",
                "--noprofile",
                "--norc",
                "-eo",
                "pipefail",
                "-c",
                evaluate(step["run"], context),
            ],
            env=clean_environ() | runner | step_env,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=300,
        )
        output.append(done.stdout + done.stderr)
        if done.returncode != 0:
            return subprocess.CompletedProcess(done.args, done.returncode, "".join(output), "")
    return subprocess.CompletedProcess("action", 0, "".join(output), "")
