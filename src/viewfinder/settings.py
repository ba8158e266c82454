"""Viewfinder's settings: one typed object, read from VIEWFINDER_* environment variables.

Every field has a default and a description; `tests/test_docs.py` fails when the README's
settings table misses one. Build the app with `create_app(Settings(...))` to pass your own.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="VIEWFINDER_", extra="ignore", frozen=True)

    data_dir: Path = Field(
        Path(".viewfinder"),
        description="Where the embedded database, blobs and the signing secret live.",
    )
    database_url: str | None = Field(
        None,
        description="SQLAlchemy URL of the database; default: SQLite in the data directory. "
        "PostgreSQL: postgresql+psycopg://user@host/db.",
    )
    blob_url: str | None = Field(
        None,
        description="Where image bytes are kept: default the blobs folder of the data directory; "
        "s3://bucket/prefix for an S3-compatible store (credentials and region from the usual "
        "AWS_* variables).",
    )
    s3_endpoint: str | None = Field(
        None, description="Endpoint of an S3-compatible store other than AWS, e.g. MinIO's."
    )
    public_url: str = Field(
        "http://127.0.0.1:8000",
        description="The address people and agents reach the server at, used in links.",
    )
    workers: int = Field(
        2, ge=0, description="Comparison worker processes `viewfinder serve` keeps running."
    )
    github_api_url: str = Field(
        "https://api.github.com",
        description="GitHub's REST API, where commit statuses go for projects with a GitHub "
        "token (GitHub Enterprise: https://HOST/api/v3).",
    )
    max_image_bytes: int = Field(
        25 * 1024 * 1024, ge=1, description="Largest screenshot accepted, in bytes."
    )
    max_image_pixels: int = Field(
        100_000_000, ge=1, description="Largest screenshot accepted, in pixels."
    )
    push_max_bytes: int = Field(
        5 * 1024 * 1024, ge=1, description="Largest image accepted by push, in bytes."
    )
    default_quota_bytes: int | None = Field(
        None, ge=0, description="Storage quota of new projects in bytes; unset means no limit."
    )
    secret: str | None = Field(
        None,
        description="Signs cursors and image URLs; default: a random one kept in the data "
        "directory. Set the same value on every node when running several.",
    )
    url_ttl_seconds: int = Field(
        3600, ge=1, description="Lifetime of signed image URLs, in seconds."
    )
    job_lease_seconds: int = Field(
        15,
        ge=1,
        description="A running job's lease: its worker renews it every third of this while "
        "the job runs, so a job whose worker died is taken by another within this time.",
    )
    vision_url: str | None = Field(
        None,
        description="An OpenAI-compatible API (e.g. https://api.openai.com/v1) asked about "
        "changes the offline analysis is unsure of; unset: never.",
    )
    vision_model: str = Field("gpt-4o-mini", description="The vision model to ask.")
    vision_key: str | None = Field(None, description="The API key for vision_url.")
    vision_below: float = Field(
        0.7, ge=0, le=1, description="Ask the model when the analysis confidence is below this."
    )
    vision_timeout: float = Field(30.0, gt=0, description="Seconds to wait for the model.")
    job_max_attempts: int = Field(
        3, ge=1, description="Attempts of a comparison before it is marked failed."
    )
    single_node: bool = Field(
        False,
        description="Run on PostgreSQL from one machine: allows blobs in the data directory and "
        "a secret kept there, which several nodes could not share.",
    )
    db_pool_size: int = Field(
        5,
        ge=1,
        le=200,
        description="Database connections each process keeps open (PostgreSQL); up to as many "
        "again are opened under load. Count every node and worker against the server's limit.",
    )
    key_cache_seconds: float = Field(
        2.0,
        ge=0,
        description="How long a process trusts a key it has checked before checking it again "
        "(a revoked key stops working at once on the node that revoked it, within this time on "
        "the others); 0 checks every request.",
    )
    build_expiry_seconds: int = Field(
        86400,
        ge=60,
        description="A build left uploading (never finalized) this long expires: its images "
        "expire and its stories never become baselines.",
    )
    chromium: str = Field(
        "/usr/bin/chromium",
        description="The Chromium that captures pages (Debian's package; never a downloaded "
        "browser).",
    )
    capture_allow: str | None = Field(
        None,
        description="Hosts that captures, image and PDF downloads may reach although they are "
        "not public addresses, comma-separated: a host name (any port), host:port (e.g. "
        "localhost:3000), an IP address, or a network such as 10.0.0.0/8. Unset: public "
        "addresses only.",
    )
    capture_timeout_seconds: float = Field(
        30.0,
        gt=0,
        le=600,
        description="Longest a capture may take (a page with everything it loads, an email, a "
        "PDF or an image download) before it fails.",
    )
    capture_max_bytes: int = Field(
        50 * 1024 * 1024,
        ge=1024,
        description="Most bytes one capture may download: a page with everything it loads, or "
        "one image or PDF.",
    )
    capture_max_height: int = Field(
        16384,
        ge=100,
        le=100_000,
        description="Tallest full-page capture, in CSS pixels; a longer page is cut there.",
    )
    axe_path: Path | None = Field(
        None,
        description="axe-core's axe.min.js, run on captured pages for the accessibility "
        "hints; default: the copy `make install` puts in src/viewfinder/capture/assets/.",
    )

    record_sample_rate: float = Field(
        1.0,
        ge=0,
        le=1,
        description="Share of visitors' sessions recorder.js records (0 to 1), decided once per "
        "browser tab.",
    )
    record_max_session_bytes: int = Field(
        5 * 1024 * 1024,
        ge=1024,
        description="Most bytes of batches one recorded session may send; later batches are "
        "refused (413) and the session is kept as it was.",
    )
    record_max_batch_bytes: int = Field(
        512 * 1024,
        ge=1024,
        description="Largest batch recorder.js may send at once, in bytes.",
    )
    deploy_max_zip_bytes: int = Field(
        200 * 1024 * 1024,
        ge=1024,
        description="Largest zipped static build accepted as a deployment, in bytes.",
    )
    deploy_max_unpacked_bytes: int = Field(
        1024 * 1024 * 1024,
        ge=1024,
        description="Most bytes a static build's zip may unpack to (zip bombs are refused).",
    )
    deploy_max_files: int = Field(
        20_000, ge=1, description="Most files a static build's zip may hold."
    )
    deploy_max_ratio: int = Field(
        200,
        ge=10,
        description="Highest compression ratio a file in a static build's zip may have; more is "
        "taken for a zip bomb.",
    )
    deploy_upload_ttl_seconds: int = Field(
        3600, ge=60, description="How long an upload URL of a deployment stays valid, in seconds."
    )
    container_runtime: str | None = Field(
        None,
        description="The container runtime that runs container deployments (`docker`, or "
        "the path of a docker-compatible CLI such as podman); unset: container deployments are "
        "refused.",
    )
    protected_profiles: str | None = Field(
        None,
        description="MCP profiles that answer 401 (with their OAuth resource metadata) to any "
        "request without a token, comma-separated; default: meticulous,revisemy. The others "
        "list their tools without one. An empty value protects none.",
    )
    checkup_expiry_days: int = Field(
        7,
        ge=1,
        le=3650,
        description="Days a design checkup's review link works before the review expires.",
    )
    checkup_capture_wait_seconds: float = Field(
        60.0,
        ge=0,
        le=300,
        description="How long creating a checkup from a page, an email or a PDF waits for its "
        "capture job before it answers (the review is open either way; get_review shows the "
        "screenshots once they are there).",
    )
    webhook_timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=60,
        description="How long a webhook delivery (review.decided) waits for the receiver.",
    )

    def deployment_problems(self) -> list[str]:
        """Settings several nodes could not share, each with its fix (empty when fine). On
        SQLite every process is on this machine, so nothing needs sharing."""
        if self.single_node or not self.resolved_database_url.startswith("postgresql"):
            return []
        problems = []
        if self.blob_url is None:
            problems.append(
                "blobs would be kept in this machine's data directory, which other nodes cannot "
                "read: set VIEWFINDER_BLOB_URL=s3://bucket/prefix (and VIEWFINDER_S3_ENDPOINT "
                "for a store other than AWS) on every node"
            )
        if self.secret is None:
            problems.append(
                "no VIEWFINDER_SECRET: each node would sign links and cursors with a secret of "
                "its own, and the others would refuse them; set the same VIEWFINDER_SECRET on "
                "every node"
            )
        if problems:
            problems.append(
                "if this server runs on one machine only, set VIEWFINDER_SINGLE_NODE=true instead"
            )
        return problems

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.data_dir / 'viewfinder.db').resolve()}"
