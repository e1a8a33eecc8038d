"""This process's peak resident memory, as its own: not the peak of the process that started it.

`getrusage(RUSAGE_SELF).ru_maxrss` keeps the larger of the process's own peak and the peak of
the process it was forked from: Linux copies the parent's high-water mark into the child at
`fork` and keeps it across `exec` (a child of a 2 GB parent reads ~2 GB before it has allocated
anything). A sweep started by a benchmark that had just synthesised 100,000 submissions reported
the benchmark's 3.4 GB as its own peak. `VmHWM` in `/proc/self/status` belongs to the memory map
`exec` created, so it is the process's own; `ru_maxrss` remains the answer where there is no
`/proc` (macOS reports it in bytes).
"""

from __future__ import annotations

import resource
import sys


def peak_rss_mb() -> float:
    """The peak resident set of this process since it was exec'd, in MB (2**20 bytes)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024
