"""Static builds as zips: checked before anything is kept, then unpacked for serving.

A zip is user input of the worst kind. Refused with a message that says what to do instead:
entries that would land outside the build folder (``../``, absolute paths, drive letters,
backslashes, symbolic links: "zip-slip"), encrypted entries, more files or more unpacked bytes
than the limits, a file that compresses better than ``max_ratio`` to one (a zip bomb), and a
file that unpacks to more than its header declared (a lying header is a bomb too). The build's
``index.html`` must be at the top of the zip or of its one top folder (``dist/index.html``).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import stat
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from viewfinder.errors import InvalidInput, TooLarge

_DRIVE = re.compile(r"^[A-Za-z]:")
_CHUNK = 1024 * 1024
# Small files compress well without being bombs (a 10 kB file of spaces): the ratio is only
# held against files past this size.
RATIO_FLOOR = 1024 * 1024


@dataclass(frozen=True, slots=True)
class BundleLimits:
    max_zip_bytes: int = 200 * 1024 * 1024
    max_unpacked_bytes: int = 1024 * 1024 * 1024
    max_files: int = 20_000
    max_ratio: int = 200


@dataclass(frozen=True, slots=True)
class Bundle:
    """What a checked zip holds: ``files`` and their ``unpacked_bytes``; ``root`` is the folder
    inside the zip that holds index.html ("" or "dist/")."""

    files: int
    unpacked_bytes: int
    root: str


def _open(data: bytes) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise InvalidInput(
            "the upload is not a zip file: zip the folder of the static build (e.g. "
            "`cd dist && zip -r ../build.zip .`) and upload that"
        ) from None


def _check_name(info: zipfile.ZipInfo) -> None:
    name = info.filename
    parts = PurePosixPath(name).parts
    if "\\" in name or name.startswith("/") or _DRIVE.match(name) or ".." in parts:
        raise InvalidInput(
            f"the zip's entry {name!r} would be written outside the build's folder (zip-slip): "
            "zip the build folder itself, with paths relative to it",
            entry=name[:200],
        )
    if stat.S_ISLNK(info.external_attr >> 16):
        raise InvalidInput(
            f"the zip's entry {name!r} is a symbolic link, which a build may not hold: zip the "
            "files themselves (zip without --symlinks)",
            entry=name[:200],
        )
    if info.flag_bits & 0x1:
        raise InvalidInput(
            f"the zip's entry {name!r} is encrypted: upload a zip without a password",
            entry=name[:200],
        )


def check_zip(data: bytes, limits: BundleLimits) -> Bundle:
    """Check a static build's zip from its directory (nothing is unpacked). Raises TooLarge
    for a zip, a file count or an unpacked size over the limits and for a zip bomb,
    InvalidInput for anything else wrong, each naming the entry."""
    if len(data) > limits.max_zip_bytes:
        raise TooLarge(
            f"the zip is {len(data):,} bytes; at most {limits.max_zip_bytes:,} are accepted "
            "(VIEWFINDER_DEPLOY_MAX_ZIP_BYTES): leave source maps and unused assets out",
            limit=limits.max_zip_bytes,
        )
    with _open(data) as archive:
        infos = archive.infolist()
    files = [i for i in infos if not i.is_dir()]
    for info in infos:
        _check_name(info)
    if len(files) > limits.max_files:
        raise TooLarge(
            f"the zip holds {len(files):,} files; at most {limits.max_files:,} are accepted "
            "(VIEWFINDER_DEPLOY_MAX_FILES)",
            limit=limits.max_files,
        )
    total = sum(i.file_size for i in files)
    if total > limits.max_unpacked_bytes:
        raise TooLarge(
            f"the zip unpacks to {total:,} bytes; at most {limits.max_unpacked_bytes:,} are "
            "accepted (VIEWFINDER_DEPLOY_MAX_UNPACKED_BYTES); a zip bomb is refused this way",
            limit=limits.max_unpacked_bytes,
        )
    for info in files:
        if info.file_size > RATIO_FLOOR and info.file_size > limits.max_ratio * max(
            info.compress_size, 1
        ):
            raise TooLarge(
                f"the zip's entry {info.filename!r} unpacks to {info.file_size:,} bytes from "
                f"{info.compress_size:,}: over {limits.max_ratio} to 1, which is taken for a "
                "zip bomb (VIEWFINDER_DEPLOY_MAX_RATIO)",
                entry=info.filename[:200],
            )
    return Bundle(len(files), total, _root({i.filename for i in files}))


def _root(names: set[str]) -> str:
    if "index.html" in names:
        return ""
    tops = {n.split("/", 1)[0] for n in names}
    if len(tops) == 1 and all("/" in n for n in names):
        top = f"{next(iter(tops))}/"
        if f"{top}index.html" in names:
            return top
    raise InvalidInput(
        "the zip has no index.html at its top (nor in its one top folder): zip the folder "
        "the build writes (the one holding index.html, e.g. dist/)"
    )


def unpack(data: bytes, dest: Path, limits: BundleLimits) -> Bundle:
    """Check the zip, then unpack its build folder into ``dest`` (made whole or not at all;
    an existing ``dest`` is kept as it is). Bytes are counted as they come out, so a header
    that lies about a size is caught. Raises what check_zip raises."""
    bundle = check_zip(data, limits)
    if dest.is_dir():
        return bundle
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=dest.parent, prefix=".unpack-"))
    try:
        _extract(data, work, bundle, limits)
        try:
            os.rename(work, dest)
        except OSError:
            if not dest.is_dir():  # another process did the same work first otherwise
                raise
            shutil.rmtree(work, ignore_errors=True)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return bundle


def _extract(data: bytes, work: Path, bundle: Bundle, limits: BundleLimits) -> None:
    written = 0
    with _open(data) as archive:
        for info in archive.infolist():
            if info.is_dir() or not info.filename.startswith(bundle.root):
                continue
            relative = info.filename[len(bundle.root) :]
            target = work.joinpath(*PurePosixPath(relative).parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            size = 0
            with archive.open(info) as source, target.open("wb") as out:
                while chunk := _read(source, info):
                    size += len(chunk)
                    written += len(chunk)
                    if size > info.file_size or written > limits.max_unpacked_bytes:
                        raise TooLarge(
                            f"the zip's entry {info.filename!r} unpacks to more than its "
                            f"header declares ({info.file_size:,} bytes): a zip bomb",
                            entry=info.filename[:200],
                        )
                    out.write(chunk)


def _read(source: IO[bytes], info: zipfile.ZipInfo) -> bytes:
    try:
        return source.read(_CHUNK)
    except (zipfile.BadZipFile, EOFError, zlib.error) as exc:
        # zipfile stops at the size the header declares and checks the CRC: a lying header
        # ends here.
        raise InvalidInput(
            f"the zip's entry {info.filename!r} is corrupt ({exc}): make the zip again",
            entry=info.filename[:200],
        ) from None
