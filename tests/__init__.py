"""Tribunal's tests.

Hypothesis runs without its per-example deadline: the deadline is wall-clock time, so on a busy
machine (CI beside other jobs, parallel workers) a property that holds fails as "too slow". Speed
is measured by the benchmarks, never by a test (this profile is loaded for every test module).
"""

from hypothesis import settings

settings.register_profile("tribunal", deadline=None)
settings.load_profile("tribunal")
