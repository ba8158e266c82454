"""Builds: one CI run for a commit, a set of named stories compared with their baselines.
Writing (open, upload, finalize) and reading (records, story pages, selectors, lists) live in
their own modules; this package offers both under one name."""

from viewfinder.services.builds.reading import (
    BUILD_STATUSES,
    BUILDS_DEFAULT,
    BUILDS_MAX,
    LISTED_STATES,
    build_record,
    build_url,
    confirm_selector,
    counts,
    get_build,
    get_story,
    list_build_stories,
    list_builds,
    resolve_selector,
    story_records,
)
from viewfinder.services.builds.writing import (
    MAX_BATCH,
    RANKS,
    StoryUpload,
    add_stories,
    add_story,
    create_build,
    expire_stale,
    finalize_build,
    predecessor,
    settle_story,
    story_state,
)
from viewfinder.services.text import check_sha

__all__ = [
    "BUILDS_DEFAULT",
    "BUILDS_MAX",
    "BUILD_STATUSES",
    "LISTED_STATES",
    "MAX_BATCH",
    "RANKS",
    "StoryUpload",
    "add_stories",
    "add_story",
    "build_record",
    "build_url",
    "check_sha",
    "counts",
    "create_build",
    "expire_stale",
    "finalize_build",
    "get_build",
    "get_story",
    "list_build_stories",
    "list_builds",
    "predecessor",
    "confirm_selector",
    "resolve_selector",
    "settle_story",
    "story_records",
    "story_state",
]
