"""`tribunal review` and `tribunal adjudicate`: experts decide flags and verdicts before a leaderboard is published.

`queue` reads a run and orders what deserves an expert's eye (material flags, split criteria, a
seeded sample); `context` finds the deliverable and source text an item needs; `impact` says what
a decision would change, by the scoring rules; `decisions` reads and writes the decisions; `app`
is the local web application (Starlette + uvicorn) over all of them.
"""
