"""The `tribunal` commands, one module per group; `jobs.cli` registers them on the typer app."""
