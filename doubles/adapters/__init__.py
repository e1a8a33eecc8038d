"""Vendors that are not vendors: `offline` (the heuristic judge in-process) and `zero` (a fixed answer
at once). They plug into `evalcore.vendors.registry` through the `tribunal.adapters` entry points."""
