"""The replay engine: recorded user sessions played back on a deployment, deterministically.

Like ``viewfinder.capture`` it knows nothing of the database or the server: a ``Recording``
and a base URL in, screenshots, normalised DOM, a timeline and JS coverage out. It imports
only ``viewfinder.capture`` (the warm Chromium camera), ``viewfinder.imaging`` and
``viewfinder.errors``.

``recording.py`` holds the recording format shared with the recorder and the ingest.
"""
