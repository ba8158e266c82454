"""Viewfinder: a self-hosted visual review server."""

import os

# numpy's bundled OpenBLAS starts a spinning thread pool; Viewfinder does no linear algebra and
# needs those cores for comparisons and requests.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
