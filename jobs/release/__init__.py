"""Releases and the public site, as commands: `tribunal release create|list|diff|latest` and `tribunal publish`.

* `store` — reading and writing a releases folder (create-only; `latest` only forward);
* `create` — a release from runs: the compatibility check, the union of the runs' rows, the
  reduction of a run over it, the decisions frozen;
* `diff` — two releases compared (`evalcore.release.diff`);
* `publish` — the static public site (+ `templates/`), private by default.

The rules are pure functions in `evalcore.release`; this package reads and writes.
"""
