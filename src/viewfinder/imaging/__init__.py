"""The comparison engine: pure functions from PNG bytes (or pixel arrays) to results.

Nothing here touches a database, a file or the network; callers pass bytes in and get frozen
results out.
"""

from typing import TYPE_CHECKING

from viewfinder.imaging.compare import Comparison, Options, Region, Size, compare
from viewfinder.imaging.masks import Mask, parse_masks
from viewfinder.imaging.pixelmatch import pixelmatch
from viewfinder.imaging.png import DEFAULT_LIMITS, Limits, decode, read_header, validate

if TYPE_CHECKING:
    from viewfinder.imaging.crops import RegionCrop, crop_regions

__all__ = [
    "DEFAULT_LIMITS",
    "Comparison",
    "Limits",
    "Mask",
    "Options",
    "Region",
    "RegionCrop",
    "Size",
    "compare",
    "crop_regions",
    "decode",
    "parse_masks",
    "pixelmatch",
    "read_header",
    "validate",
]


def __getattr__(name: str) -> object:
    # Crops load when first asked for: a command-line diff never makes one, and its start
    # would pay for their module.
    if name in ("RegionCrop", "crop_regions"):
        from viewfinder.imaging import crops

        return getattr(crops, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
