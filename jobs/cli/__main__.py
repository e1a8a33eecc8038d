"""`python -m jobs.cli …`: the `tribunal` command from the uploaded code (a cluster job's entry point)."""

from jobs.cli.app import app

app()
