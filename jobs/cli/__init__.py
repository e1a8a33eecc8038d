"""The `tribunal` command line (typer): `app.py` registers the commands the other modules define.

`python -m jobs.cli` runs it from a checkout (how a cluster job runs the uploaded code).
"""
