import numpy as np

LABEL_SAME: int
LABEL_CHANGED: int
LABEL_DARKER: int
LABEL_AA: int
LABEL_SUBTLE: int
LABEL_SIZE: int
LABEL_MASKED: int
LABEL_MOVED: int
LABEL_NOISE: int
LABEL_COUNT: int
PAL_GRAYS: int
PAL_CHANGED: int
PAL_SIZE: int
PAL_MASKED: int
PAL_MOVED: int
PAL_NOISE: int

def classify(
    a: np.ndarray,
    b: np.ndarray,
    width: int,
    height: int,
    max_delta: float,
    include_aa: bool,
    checkerboard: bool,
    labels: np.ndarray,
    threads: int = 1,
) -> tuple[int, int, int, int, int]: ...
def unfilter(raw: bytes | memoryview, out: np.ndarray, first_row: int) -> int: ...
def render_diff(labels: np.ndarray, candidate: np.ndarray, out: np.ndarray) -> None: ...
def regions(
    labels: np.ndarray, flagged: bytes, cell: int, gap: int, max_boxes: int
) -> list[tuple[int, int, int, int, int]]: ...
