"""What changed, in words: rendering noise, moves, colour changes and content changes, with a
verdict a reviewer can start from. Offline, deterministic, no model.

Each changed region is examined on its own, in this order:
- noise: both images are blurred a little and the base is shifted by the sub-pixel motion that
  best explains the candidate (Lucas-Kanade over the region and 32 px around it); when what
  remains is small everywhere, the region is re-rasterisation noise (sub-pixel offsets, tiny
  rotations, smoothing). The surroundings pin the motion to zero when only the region changed,
  so a real local change is never explained away as motion. Text whose every few glyphs are
  explained by a displacement of their own of at most 2 px is glyphs drawn again (a block a
  fraction of a pixel off or rotated, letter-spacing drifting along a line): noise too.
- move: a translation (dx, dy) under which the candidate equals the base exactly on the
  region's changed pixels, found from row and column signatures or phase correlation (moves
  found in earlier regions first); a vector found nowhere else must show that the content left
  where it came from, and text a pixel or two along is not a move. Moved content landing on
  content that stayed: an overlap.
- color: the shapes (edges) are where they were, only colours differ.
- parts: a region that is none of these is split where unchanged rows or columns part it,
  and its parts examined the same way.
- content: anything else; content that vanished into background, or a detailed picture that
  turned plain (a broken image), is a regression signal.

The whole pair then gets its kind, verdict and words: content inserted above what moved down
pushed it; vanished pieces along one line are content cut off. A pair whose every region is
noise may be one block moved a whole pixel: when no region is bare text, one translation of a
pixel explains each exactly, and content beside them stayed put, it is a layout change.

Before any of this, while comparing, ``tint`` makes the pixels of an area tinted visibly from
one colour to another changed pixels, however small each delta (a colour change).

The modules, in the order a region meets them: ``noise`` and ``glyphs``; ``candidates``
(translations worth trying) and ``moves`` (the exact check, overlaps); ``content`` (colour
only, vanished, image lost); ``examine`` (that order, region by region); ``verdict`` (the
pair's kind and verdict); ``wording`` (every text a reviewer reads). ``model`` holds the
results and ``signals`` the names of the findings that decisions are taken on; ``reach``
stretches every distance above device scale 2, when the scale is given.
"""

from viewfinder.imaging.analysis.examine import analyze
from viewfinder.imaging.analysis.model import Analysis, Change, Kind, Verdict
from viewfinder.imaging.analysis.signals import Signal
from viewfinder.imaging.analysis.verdict import IDENTICAL, subtle_only

__all__ = ["IDENTICAL", "Analysis", "Change", "Kind", "Signal", "Verdict", "analyze", "subtle_only"]
