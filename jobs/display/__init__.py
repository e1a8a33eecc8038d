"""The display room: every terminal rendering of the command line, one module per thing shown.

`leaderboard` (rates with intervals, ranks, what the decisions changed), `validation`, `calibration`,
`comparison`, `status` (`tribunal status`), `purge`, `estimate`, `grade` (one grading), `show` (one stored grading),
`sweep_summary` (what a sweep did, at its end) and `progress` (the live progress line, Ctrl-C and
the sweep's warnings while it runs). Each lays its tables out with `jobs.display.tables` (csv,
markdown and JSON forms included), so a table survives any width. The commands that compute what
is shown live in `jobs.per_run` and `jobs.sweep`; the CLI (`jobs.cli`) calls both.
"""
