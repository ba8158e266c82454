"""Which role each service operation needs, declared once. Every service that changes
something calls ``require(actor, "<operation>")`` before anything else; every front door names
the operation each of its routes, tools and actions carries out, and a test walks them all with
a key of each role (tests/test_roles.py). An operation missing here cannot be named.

Roles imply others (services/env.py): admin can do everything, approve can review.
"""

from __future__ import annotations

from dataclasses import dataclass

from viewfinder.errors import Forbidden
from viewfinder.services.env import Actor


@dataclass(frozen=True)
class Needs:
    """``role`` None: any key of the project may; ``action`` is how a refusal words it;
    ``public``: no key at all (a signed link carries its own authorisation); ``who``: only a
    person, or only the server's owners, whatever their roles (the service checks it)."""

    role: str | None
    action: str
    public: bool = False
    # "person": only a person (or an agent with their OAuth token); "owner": only the
    # server's owners. A project key is refused, saying why (details role: this value).
    who: str | None = None


def _read(action: str) -> Needs:
    return Needs(None, action)


OPERATIONS: dict[str, Needs] = {
    # reading: any key of the project
    "whoami": _read("read the project"),
    "usage": _read("read the storage use"),
    "list_builds": _read("list builds"),
    "get_build": _read("read a build"),
    "list_build_stories": _read("list a build's stories"),
    "get_story": _read("read a story"),
    "get_diff": _read("read a diff"),
    "render": _read("render images of a diff"),
    "list_comments": _read("read comments"),
    "get_comparison": _read("read a comparison"),
    "get_image": _read("read an image"),
    "list_contexts": _read("list contexts"),
    "list_baselines": _read("list baselines"),
    "get_pr_changeset": _read("read a pull request's changes"),
    "pr_comment": _read("write a pull request's comment body"),
    "get_github": _read("see whether the project has a GitHub token"),
    "read_test_runs": _read("read test runs"),
    "submit_feedback": _read("send feedback"),
    "get_deployment": _read("read a deployment"),
    "list_deployments": _read("list deployments"),
    "list_sessions": _read("list recorded sessions"),
    "get_session": _read("read a recorded session"),
    "get_review": _read("read a design checkup"),
    "list_reviews": _read("list design checkups"),
    "get_billing": _read("read the checkup credits"),
    # a self-hosted server takes no payments: any key hears why and what to do instead
    "payments": _read("buy checkup credits"),
    # no key: the health check, and signed links (which carry their own authorisation)
    "health": Needs(None, "check that the server is up", public=True),
    "open_file": Needs(None, "open a signed file link", public=True),
    "delivered_image": Needs(None, "open a pushed image's link", public=True),
    "receive_upload": Needs(None, "upload a build to a signed upload URL", public=True),
    # a web page's recorder: its key is public and can do nothing else (services/env.py)
    "recorder_script": Needs(None, "load the recorder script", public=True),
    "ingest_preflight": Needs(None, "ask whether a page may send sessions", public=True),
    "ingest_session": Needs("record", "send recorded sessions"),
    # the person's side of a checkup: the token in the review link is their whole sign-in
    "review_link": Needs(None, "mark, verify and decide a design checkup", public=True),
    "guest_link": Needs(None, "suggest changes on a design checkup", public=True),
    # uploading (CI)
    "create_build": Needs("upload", "upload screenshots"),
    "add_stories": Needs("upload", "upload screenshots"),
    "finalize_build": Needs("upload", "upload screenshots"),
    "push": Needs("upload", "push screenshots"),
    "compare_images": Needs("upload", "compare images"),
    "trigger_test_run": Needs("upload", "trigger test runs"),
    "report_check": Needs("upload", "report a test run's custom checks"),
    "set_policy": Needs("upload", "set a context's expiry policy"),
    # deploying a build to replay sessions on (CI)
    "request_asset_upload": Needs("upload", "upload builds"),
    "register_asset_build": Needs("upload", "upload builds"),
    "register_preview": Needs("upload", "upload builds"),
    "request_container_upload": Needs("upload", "upload builds"),
    "register_container_build": Needs("upload", "upload builds"),
    # expiring stops a delivery: the role that pushes (or approve, which implies it not, so
    # both are named in the refusal's advice) and never a review-only key
    "expire_image": Needs("upload", "expire images"),
    # closing a manual context expires its images; closing a PR context also promotes or
    # discards its baselines, which needs approve (checked by contexts.close_context)
    "close_context": Needs("upload", "close contexts"),
    # reviewing (agents)
    "review_diff": Needs("review", "review diffs"),
    "accept_build": Needs("review", "review diffs"),
    "comment": Needs("review", "comment on diffs"),
    "resolve_comment": Needs("review", "resolve comments"),
    "delete_comment": Needs("review", "delete comments"),
    "create_review": Needs("review", "open design checkups"),
    "add_screenshot": Needs("review", "add screenshots to design checkups"),
    "add_findings": Needs("review", "add findings to design checkups"),
    "resolve_marks": Needs("review", "resolve the marks of design checkups"),
    "second_opinion": Needs("review", "run the second opinion of design checkups"),
    "resume_webhook": Needs("review", "resume the paused webhook of design checkups"),
    # approving (people who own the baselines)
    "approve_diff": Needs("approve", "approve diffs (change baselines)"),
    "delete_baseline": Needs("approve", "delete baselines"),
    "settle_baselines": Needs(
        "approve", "close PR contexts (closing promotes or discards their baselines)"
    ),
    # administering
    "update_project": Needs("admin", "change the project's settings"),
    "set_github": Needs("admin", "set the project's GitHub token"),
    "set_quota": Needs("admin", "change the storage quota"),
    "set_allowance": Needs("admin", "change the checkup credits allowance"),
    "list_keys": Needs("admin", "list keys"),
    "list_feedback": Needs("admin", "read the feedback sent to this server"),
    "create_key": Needs("admin", "create keys"),
    "revoke_key": Needs("admin", "revoke keys"),
    # a visitor who asks to be forgotten
    "delete_session": Needs("admin", "delete recorded sessions"),
    "list_members": Needs("admin", "list members"),
    "manage_members": Needs("admin", "manage members"),
    "invite": Needs("admin", "invite people"),
    # people: who the caller is, and their projects (any key, person or token)
    "list_projects": _read("list projects"),
    "get_project": _read("read which project calls work in"),
    # a person's own default project: a project key is refused by the service, saying why
    "set_project": Needs(None, "change the default project", who="person"),
    # the server's owners (a person, never a key): checked by services/teams.py
    "create_project": Needs(None, "create projects", who="owner"),
    "update_team_project": Needs(None, "rename or archive projects", who="owner"),
}


def needs(operation: str) -> Needs:
    """The declaration of an operation. Raises KeyError for one nobody declared."""
    return OPERATIONS[operation]


def refusal(actor: Actor, operation: str) -> Forbidden | None:
    """The Forbidden error for an actor who may not carry out the operation, else None."""
    declared = OPERATIONS[operation]
    return None if declared.role is None else actor.refusal(declared.role, declared.action)


def require(actor: Actor, operation: str) -> None:
    """Raise Forbidden, naming the role to ask for, when the actor may not carry out the
    operation."""
    declared = OPERATIONS[operation]
    if declared.role is not None:
        actor.require(declared.role, declared.action)
