"""The `viewfinder` command line: a thin adapter over the engine, the REST API and, for the
commands that work on this machine's data directory, the local services. The commands are put
together into one `viewfinder` command by viewfinder.main."""
