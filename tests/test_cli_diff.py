"""`viewfinder diff` as a user runs it: a real process, real files, exit codes and messages."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tests.pngs import header_only
from viewfinder.imaging import decode, png

VIEWFINDER = str(Path(sys.executable).with_name("viewfinder"))


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [VIEWFINDER, "diff", *map(str, args)], capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def images(tmp_path: Path) -> tuple[Path, Path]:
    base = np.full((40, 60, 3), 255, np.uint8)
    cand = base.copy()
    cand[10:20, 5:15] = (0, 0, 0)
    paths = tmp_path / "base.png", tmp_path / "candidate.png"
    paths[0].write_bytes(png.encode(base))
    paths[1].write_bytes(png.encode(cand))
    return paths


def test_unchanged_images_exit_zero(images: tuple[Path, Path]) -> None:
    result = run(images[0], images[0])
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("unchanged: 0 of 2,400 pixels differ")


def test_changed_images_exit_one_and_write_the_diff(
    images: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "diff.png"
    result = run(*images, "--out", out)
    assert result.returncode == 1, result.stderr
    assert "changed: 100 of 2,400 pixels differ" in result.stdout
    assert "region 1: 10x10 at (5, 10), 100 pixels" in result.stdout
    assert decode(out.read_bytes()).shape[:2] == (40, 60)


@pytest.mark.parametrize("flags", [(), ("--json",)], ids=["text", "json"])
def test_a_reader_that_stops_early_still_gets_the_verdict_and_no_traceback(
    images: tuple[Path, Path], flags: tuple[str, ...]
) -> None:
    # `viewfinder diff a b | head -0`: the pipe is closed before the first line is written.
    for pair, verdict in ((images, 1), ((images[0], images[0]), 0)):
        with subprocess.Popen(
            [VIEWFINDER, "diff", *map(str, pair), *flags],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            proc.stdout.close()
            stderr = proc.stderr.read()
            assert proc.wait(timeout=60) == verdict, stderr
        assert stderr == b""


def test_json_output_has_the_documented_fields(images: tuple[Path, Path]) -> None:
    result = run(*images, "--json", "--mask", "0,0,10,40", "--threshold", "0.2")
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["changed"] is True
    assert (data["changed_pixels"], data["compared_pixels"]) == (50, 2000)
    assert data["diff_ratio"] == pytest.approx(0.025)
    assert (data["width"], data["height"]) == (60, 40)
    assert data["base_size"] == data["candidate_size"] == {"width": 60, "height": 40}
    assert data["regions"] == [{"x": 10, "y": 10, "width": 5, "height": 10, "changed_pixels": 50}]
    assert data["masks"] == [{"x": 0, "y": 0, "width": 10, "height": 40}]
    assert data["threshold"] == 0.2


def test_max_diff_ratio_turns_a_small_change_into_unchanged(images: tuple[Path, Path]) -> None:
    assert run(*images, "--max-diff-ratio", "0.05").returncode == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.png", "{c}"], "base image missing.png does not exist"),
        (["{b}", "{dir}"], "is a directory, not a PNG file"),
        (["{b}", "{text}"], "[invalid_image] candidate is not a PNG file"),
        (["{b}", "{c}", "--mask", "1,2,3"], "is not X,Y,WIDTH,HEIGHT"),
        (["{b}", "{c}", "--mask", "0,0,0,4"], "[invalid_mask] mask 1: width must be between 1"),
        (["{b}", "{c}", "--threshold", "3"], "Invalid value for '--threshold'"),
        (["{b}", "{c}", "--scale", "9"], "[invalid_input] scale must be the device scale"),
        (["{b}", "{c}", "--scale", "three"], "Invalid value for '--scale'"),
        (["{b}"], "Missing argument"),
    ],
)
def test_bad_usage_and_bad_input_exit_two_with_the_reason(
    images: tuple[Path, Path], tmp_path: Path, args: list[str], message: str
) -> None:
    text = tmp_path / "notes.png"
    text.write_text("hello")
    fill = {"b": images[0], "c": images[1], "dir": tmp_path, "text": text}
    result = run(*(a.format(**fill) for a in args))
    assert result.returncode == 2
    assert message in " ".join(result.stderr.split()), result.stderr
    assert result.stdout == ""


def test_an_unwritable_diff_path_exits_two(images: tuple[Path, Path], tmp_path: Path) -> None:
    result = run(*images, "--out", tmp_path / "no" / "such" / "dir" / "d.png")
    assert result.returncode == 2
    assert "cannot write the diff image" in result.stderr


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda data: data[: len(data) // 2], "[invalid_image] candidate is truncated"),
        (lambda data: header_only(30000, 30000), "[image_too_large] candidate is 30000x30000"),
        (lambda data: b"", "[invalid_image] candidate is empty"),
    ],
)
def test_broken_and_oversized_images_exit_two(
    images: tuple[Path, Path], tmp_path: Path, make: Callable[[bytes], bytes], message: str
) -> None:
    bad = tmp_path / "bad.png"
    bad.write_bytes(make(images[1].read_bytes()))
    result = run(images[0], bad)
    assert result.returncode == 2
    assert message in result.stderr


# Modules a comparison on this machine never uses: loading them made `viewfinder diff` 16 times
# slower than odiff as a process. (typer and pydantic, with which typer checks option values,
# parse the command line when it is not plain; see cli/quick.py.) The last four cost it 12 ms
# more: a pool, tempfile's randomness and pathlib's imports, for one thread, one file name and
# three paths.
NOT_FOR_A_DIFF = (
    "typer",
    "httpx",
    "rich",
    "pydantic",
    "sqlalchemy",
    "starlette",
    "fastapi",
    "playwright",
    "concurrent.futures",
    "logging",
    "tempfile",
    "pathlib",
)


def test_a_file_that_never_ends_is_refused_at_the_byte_limit(images: tuple[Path, Path]) -> None:
    result = run("/dev/zero", images[1])
    assert result.returncode == 2
    assert "[image_too_large] base image /dev/zero is larger than the 25 MB limit" in (
        result.stderr
    )


def test_running_out_of_memory_exits_two_not_changed(tmp_path: Path) -> None:
    # 8000x8000 needs about 450 MB resident to compare, and more address space than that; the
    # process may reserve 450 MB in all (its imports take a third of that).
    pixels = np.zeros((8000, 8000, 3), np.uint8)
    paths = tmp_path / "a.png", tmp_path / "b.png"
    paths[0].write_bytes(png.encode(pixels, level=1))
    pixels[:10, :10] = 255
    paths[1].write_bytes(png.encode(pixels, level=1))
    del pixels

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (450 * 2**20, 450 * 2**20))

    result = subprocess.run(
        [VIEWFINDER, "diff", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=cap,
    )
    assert result.returncode == 2, result.stderr
    assert "error: not enough memory to compare" in result.stderr


def test_a_diff_loads_neither_the_http_client_nor_the_server(
    images: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "diff.png"
    probe = (
        "import atexit, sys; "
        f"atexit.register(lambda: print([m for m in {NOT_FOR_A_DIFF!r} if m in sys.modules], "
        "file=sys.stderr)); "
        "from viewfinder.main import main; "
        f"sys.argv = ['viewfinder', 'diff', {str(images[0])!r}, {str(images[1])!r}, "
        f"'--out', {str(out)!r}]; main()"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"
    assert out.read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize(
    "args",
    [
        ["--threshold=0.2", "--mask", "0,0,10,40", "--json"],
        ["--json", "--max-diff-ratio", "0.5", "--include-aa"],
        ["--ignore-noise", "--", "{b}", "{c}"],
        ["--out", "{o}", "--json"],
    ],
)
def test_plain_command_lines_give_what_typer_gives(
    images: tuple[Path, Path], args: list[str], tmp_path: Path
) -> None:
    paths = {"b": images[0], "c": images[1], "o": tmp_path / "diff.png"}
    filled = [a.format(**paths) for a in args]
    given = filled if "--" in filled else [*map(str, images), *filled]
    quick = run(*given)
    # The same command line through typer: the command run from Python, the quick path off.
    probe = (
        "import sys; from viewfinder import main; main.QUICK.clear(); "
        f"sys.argv = ['viewfinder', 'diff', *{given!r}]; main.main()"
    )
    typed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert (quick.returncode, quick.stdout, quick.stderr) == (
        typed.returncode,
        typed.stdout,
        typed.stderr,
    )
