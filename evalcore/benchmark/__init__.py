"""Benchmarks: the public task layout (local or s3://), document -> text conversion and OCR, input
limits, page boundaries, instruction-only tasks, and `tribunal validate`'s checks.

Import the module you need (`evalcore.benchmark.loader.load_benchmark`): this package's init imports
nothing, so importing one part never loads the others.
"""
