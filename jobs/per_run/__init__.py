"""Commands that work on one run's folder after (or beside) its sweep.

`reduce` (the leaderboard), `show` (one submission as stored), `report` (`report.html`), `calibrate` (judges against labels),
`compare` (two runs, or raw vs adjudicated), `status` (`tribunal status`: batches, progress, what
the vendors hold) and `purge` (what a run's batches left at the vendors). None of them starts the
sweep engine or imports the command line.
"""
