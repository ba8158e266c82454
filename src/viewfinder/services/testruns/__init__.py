"""Test runs: recorded sessions replayed on a deployment and on its base commit's deployment,
each screenshot pair compared by Viewfinder's engine and explained by its DOM, timeline and
coverage diffs; checks, reviews, threads and feedback.

    runs.py     trigger_test_run, complete_base_run, reading a run's status
    work.py     the jobs: replay, compare, finish (flakes, ranking, built-in checks)
    review.py   the diff list and counts, image links, DOM and timeline diffs, decisions, threads
    cover.py    JS coverage of runs, replays and screenshots; coverage diffs
    checks.py   built-in and custom checks with Markdown reports
    feedback.py submit_feedback, read by the server's admins
    sources.py  where sessions and deployments come from (the recorder's services)
"""

# Importing the package registers its jobs and its comparison owner (as the other services'
# modules do on import), so whatever triggers a run also has the work it queues known.
from viewfinder.services.testruns import work as _work  # noqa: E402, F401
