"""Releases: dated, immutable leaderboards built from one or more runs, and what may be published.

* `compatibility` — which run.json keys must agree for runs to be ranked together, and the refusal
  naming each difference (`--allow KEY` accepts one, recorded);
* `model` — the release record (`Release`, release.json), publishing settings, which run a system is
  ranked from (`assign_systems`), the `latest` pointer that only moves forward (`advance_latest`);
* `diff` — what changed from one release to the next (`diff_releases`);
* `public` — the public aggregates a site may carry (the downloads' model and JSON Schema) and the
  one rule that keeps private text out of it.

Pure: the I/O (reading runs, writing create-only, the site) is `jobs.release`; the layout of a
releases folder is `evalcore.storage.release_folder`.
"""
