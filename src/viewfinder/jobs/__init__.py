"""Background work: the job queue (rows in the database) and the worker processes that run it."""
