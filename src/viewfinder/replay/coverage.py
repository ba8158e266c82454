"""JavaScript coverage from V8's precise coverage (CDP ``Profiler.takePreciseCoverage``): the
byte ranges of each script and their counts turned into lines and functions that ran.

V8 reports, per function, its whole range first and then the blocks inside it with their own
counts; the innermost range decides a byte's count. A line ran when any byte of it did. Files
are keyed by their path on the deployment, functions by name, because line numbers move from
one build to the next while names mostly stay."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from viewfinder.replay.model import FileCoverage, FunctionCoverage


def _line_starts(source: str) -> list[int]:
    starts = [0]
    at = source.find("\n")
    while at != -1:
        starts.append(at + 1)
        at = source.find("\n", at + 1)
    return starts


def _ranges(lines: Iterable[int]) -> tuple[tuple[int, int], ...]:
    out: list[list[int]] = []
    for line in sorted(set(lines)):
        if out and out[-1][1] == line - 1:
            out[-1][1] = line
        else:
            out.append([line, line])
    return tuple((a, b) for a, b in out)


def file_path(url: str, origin: str) -> str | None:
    """The path a script is known by (``assets/app.js``): scripts of the deployment's origin
    only; None for others and for scripts without a URL (evaluated code)."""
    parts = urlsplit(url)
    if not url or f"{parts.scheme}://{parts.netloc}" != origin:
        return None
    return parts.path.lstrip("/") or "index.html"


def from_v8(
    result: list[dict[str, Any]], sources: Mapping[str, str], origin: str
) -> tuple[FileCoverage, ...]:
    """The files whose code ran, from one ``takePreciseCoverage`` result (counts since the
    previous one). ``sources`` maps a script URL to its text, for lines; a script without one
    (inline in a page) is counted by functions only."""
    files: dict[str, FileCoverage] = {}
    for script in result:
        path = file_path(str(script.get("url", "")), origin)
        if path is None:
            continue
        source = sources.get(script["url"])
        made = _script(path, script["functions"], source)
        if made is not None:
            files[path] = merge([files[path], made])[0] if path in files else made
    return tuple(sorted(files.values(), key=lambda f: f.path))


def _script(path: str, functions: list[dict[str, Any]], source: str | None) -> FileCoverage | None:
    raw = source.encode("utf-16-le") if source is not None else b""
    size = len(raw) // 2  # V8 offsets count UTF-16 code units
    painted = bytearray(size)
    starts = _line_starts(source) if source is not None else []
    ran: list[FunctionCoverage] = []
    ranges: list[tuple[int, int, int]] = []
    for fn in functions:
        spans = fn.get("ranges") or []
        if not spans:
            continue
        whole = spans[0]
        ranges.extend((int(r["startOffset"]), int(r["endOffset"]), int(r["count"])) for r in spans)
        if whole["count"] > 0:
            first = bisect.bisect_right(starts, whole["startOffset"]) if starts else 0
            last = bisect.bisect_right(starts, max(whole["endOffset"] - 1, 0)) if starts else 0
            name = fn.get("functionName") or (
                "(top level)" if whole["startOffset"] == 0 else "(anonymous)"
            )
            ran.append(FunctionCoverage(name, int(whole["count"]), first, last))
    if source is None:
        if not ran:
            return None
        return FileCoverage(path, 0, 0, (), tuple(sorted(ran, key=_fn_key)))
    # Outer ranges first, so that inner ones paint over them.
    for start, end, count in sorted(ranges, key=lambda r: (r[0], -r[1])):
        start, end = max(0, start), min(size, end)
        if end > start:
            painted[start:end] = (b"\x01" if count > 0 else b"\x00") * (end - start)
    covered: list[int] = []
    executable = 0
    # Map UTF-16 offsets to lines through the text itself (offsets equal code points for
    # text in the BMP, which is nearly all JavaScript).
    for number, begin in enumerate(starts, start=1):
        end = starts[number] if number < len(starts) else len(source)
        if not source[begin:end].strip():
            continue
        executable += 1
        if painted.find(1, begin, min(end, size)) != -1:
            covered.append(number)
    if not covered and not ran:
        return None
    return FileCoverage(
        path, executable, len(covered), _ranges(covered), tuple(sorted(ran, key=_fn_key))
    )


def _fn_key(f: FunctionCoverage) -> tuple[int, str]:
    return (f.first_line, f.name)


def merge(parts: Iterable[FileCoverage]) -> tuple[FileCoverage, ...]:
    """Coverage of several periods (screenshots) or replays together, file by file."""
    lines: dict[str, set[int]] = {}
    executable: dict[str, int] = {}
    functions: dict[str, dict[tuple[str, int, int], int]] = {}
    for part in parts:
        mine = lines.setdefault(part.path, set())
        for a, b in part.covered:
            mine.update(range(a, b + 1))
        executable[part.path] = max(executable.get(part.path, 0), part.executable_lines)
        fns = functions.setdefault(part.path, {})
        for f in part.functions:
            key = (f.name, f.first_line, f.last_line)
            fns[key] = fns.get(key, 0) + f.count
    return tuple(
        FileCoverage(
            path,
            executable[path],
            len(lines[path]),
            _ranges(lines[path]),
            tuple(
                sorted(
                    (FunctionCoverage(n, c, a, b) for (n, a, b), c in functions[path].items()),
                    key=_fn_key,
                )
            ),
        )
        for path in sorted(lines)
    )


def percentage(f: FileCoverage) -> float | None:
    if not f.executable_lines:
        return None
    return round(100.0 * f.covered_lines / f.executable_lines, 1)


def diff(base: Iterable[FileCoverage], head: Iterable[FileCoverage]) -> list[dict[str, Any]]:
    """Base vs head, file by file and function by function: rows ``repoFilePath``, ``status``
    (added, removed, changed; files the same on both sides are left out), ``baseRanges``,
    ``headRanges`` and ``functions`` (each ``name``, ``status``, ``baseCount``,
    ``headCount``)."""
    before = {f.path: f for f in base}
    after = {f.path: f for f in head}
    rows: list[dict[str, Any]] = []
    for path in sorted(set(before) | set(after)):
        b, h = before.get(path), after.get(path)
        b_fns = _counts(b)
        h_fns = _counts(h)
        fn_rows = []
        for name in sorted(set(b_fns) | set(h_fns)):
            bc, hc = b_fns.get(name), h_fns.get(name)
            if bc == hc:
                continue
            status = "added" if bc is None else "removed" if hc is None else "changed"
            fn_rows.append({"name": name, "status": status, "baseCount": bc, "headCount": hc})
        b_lines = b.covered_lines if b else 0
        h_lines = h.covered_lines if h else 0
        if b is not None and h is not None and not fn_rows and b_lines == h_lines:
            continue
        rows.append(
            {
                "repoFilePath": path,
                "status": "added" if b is None else "removed" if h is None else "changed",
                "baseRanges": [list(r) for r in b.covered] if b else [],
                "headRanges": [list(r) for r in h.covered] if h else [],
                "functions": fn_rows,
            }
        )
    return rows


def _counts(f: FileCoverage | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for fn in f.functions if f else ():
        out[fn.name] = out.get(fn.name, 0) + fn.count
    return out


def to_rows(
    files: Iterable[FileCoverage],
    *,
    glob: str | None = None,
    include_ranges: bool = False,
    include_percentage: bool = True,
) -> list[dict[str, Any]]:
    """Per-file rows keyed by ``repoFilePath`` as the tools answer them."""
    import fnmatch

    rows = []
    for f in files:
        if glob and not fnmatch.fnmatch(f.path, glob):
            continue
        row: dict[str, Any] = {
            "repoFilePath": f.path,
            "coveredLines": f.covered_lines,
            "executableLines": f.executable_lines,
            "functions": [{"name": fn.name, "count": fn.count} for fn in f.functions],
        }
        if include_percentage:
            row["coveragePercentage"] = percentage(f)
        if include_ranges:
            row["coveredRanges"] = [list(r) for r in f.covered]
        rows.append(row)
    return rows
