"""Debian's Chromium as every test and benchmark launches it."""

from __future__ import annotations

CHROMIUM = "/usr/bin/chromium"
# Everything that can make two renders of the same page differ is pinned or switched off.
FLAGS = (
    "--force-color-profile=srgb",
    "--font-render-hinting=none",
    "--disable-lcd-text",
    "--hide-scrollbars",
    "--disable-partial-raster",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
)
