"""Content-addressed blob storage: bytes are stored once under their sha256.

Writes are atomic: on disk a temporary file in the same folder is fsynced and renamed (then the
folder is fsynced); in S3 an object appears whole or not at all. A crash leaves no torn blob.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Protocol

from viewfinder.errors import InvalidInput, NotFound
from viewfinder.store.loopreads import refuse_on_loop


class BlobStore(Protocol):
    def put(self, data: bytes, sha256: str | None = None) -> str: ...
    def get(self, sha256: str) -> bytes: ...
    def exists(self, sha256: str) -> bool: ...
    def delete(self, sha256: str) -> None: ...


class DiskBlobStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, sha256: str) -> Path:
        refuse_on_loop()
        if len(sha256) != 64 or not all(c in "0123456789abcdef" for c in sha256):
            raise NotFound(f"no blob {sha256!r}")
        return self.root / sha256[:2] / sha256[2:4] / sha256

    def put(self, data: bytes, sha256: str | None = None) -> str:
        """Store the bytes (once) and return their sha256."""
        sha256 = sha256 or hashlib.sha256(data).hexdigest()
        target = self.path(sha256)
        if target.exists():
            return sha256
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return sha256

    def get(self, sha256: str) -> bytes:
        try:
            return self.path(sha256).read_bytes()
        except FileNotFoundError:
            raise NotFound(f"blob {sha256} is missing from {self.root}") from None

    def exists(self, sha256: str) -> bool:
        return self.path(sha256).exists()

    def delete(self, sha256: str) -> None:
        """Remove the blob (idempotent)."""
        self.path(sha256).unlink(missing_ok=True)


def unreachable(exc: BaseException) -> bool:
    """Whether an error of the S3 client says the bucket could not be reached or kept failing
    (its client has already retried), as opposed to a missing blob or a refused request."""
    return type(exc).__module__.startswith("obstore") and type(exc).__name__ == "GenericError"


class S3BlobStore:
    """Blobs in an S3-compatible bucket, under ``s3://bucket/prefix``, keyed like the disk store.
    Several API nodes and workers share one; credentials come from the AWS_* variables."""

    def __init__(self, url: str, endpoint: str | None = None) -> None:
        from obstore.store import S3Store

        if endpoint is None:
            self.store = S3Store.from_url(url)
        else:
            allow_http = endpoint.startswith("http://")  # a store on the local network
            self.store = S3Store.from_url(
                url, endpoint=endpoint, client_options={"allow_http": allow_http}
            )

    @staticmethod
    def key(sha256: str) -> str:
        refuse_on_loop()
        if len(sha256) != 64 or not all(c in "0123456789abcdef" for c in sha256):
            raise NotFound(f"no blob {sha256!r}")
        return f"{sha256[:2]}/{sha256[2:4]}/{sha256}"

    def put(self, data: bytes, sha256: str | None = None) -> str:
        import obstore

        sha256 = sha256 or hashlib.sha256(data).hexdigest()
        obstore.put(self.store, self.key(sha256), data)  # same key, same bytes: idempotent
        return sha256

    def get(self, sha256: str) -> bytes:
        import obstore

        try:
            return bytes(obstore.get(self.store, self.key(sha256)).bytes())
        except FileNotFoundError:
            raise NotFound(f"blob {sha256} is missing from the bucket") from None

    def exists(self, sha256: str) -> bool:
        import obstore

        try:
            obstore.head(self.store, self.key(sha256))
        except FileNotFoundError:
            return False
        return True

    def delete(self, sha256: str) -> None:
        import obstore

        try:
            obstore.delete(self.store, self.key(sha256))
        except FileNotFoundError:
            pass

    # Uploads that clients PUT straight into the bucket (a deployment's zip) wait under
    # uploads/ until they are checked and stored by their sha256.
    def sign_put(self, name: str, ttl_seconds: int) -> str:
        """A presigned URL to PUT ``uploads/<name>`` with, valid ``ttl_seconds``."""
        from datetime import timedelta

        import obstore

        return str(
            obstore.sign(self.store, "PUT", f"uploads/{name}", timedelta(seconds=ttl_seconds))
        )

    def take(self, name: str) -> bytes | None:
        """The bytes uploaded as ``uploads/<name>`` (then removed), or None when none were."""
        import obstore

        try:
            data = bytes(obstore.get(self.store, f"uploads/{name}").bytes())
        except FileNotFoundError:
            return None
        obstore.delete(self.store, f"uploads/{name}")
        return data


class StagingStore(Protocol):
    """A store that takes uploads straight from clients, by presigned URLs (S3)."""

    def sign_put(self, name: str, ttl_seconds: int) -> str: ...
    def take(self, name: str) -> bytes | None: ...


def open_store(blob_url: str | None, data_dir: Path, s3_endpoint: str | None = None) -> BlobStore:
    """The store a setting names: none (the data directory), a path, or s3://bucket/prefix."""
    if blob_url is None:
        return DiskBlobStore(data_dir / "blobs")
    if blob_url.startswith("s3://"):
        return S3BlobStore(blob_url, s3_endpoint)
    if "://" in blob_url and not blob_url.startswith("file://"):
        raise InvalidInput(f"blob_url {blob_url!r}: use a folder path or s3://bucket/prefix")
    return DiskBlobStore(Path(blob_url.removeprefix("file://")))
