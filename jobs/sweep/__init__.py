"""The sweep engine: everything `tribunal sweep` runs on Ray, from the command's request to the last shard.

`prepare` turns the command line into the run's configuration (vendor mode, batch, personas,
emulators); `driver.run_sweep` is the recipe, one named step each: `ocr_step` (scans OCR'd as Ray
tasks), `identity` and `lock` (the run's name, resume checks, one writer), `intake` (the one read of
the submissions, task-major shards), `startup` (Ray, the vendor actors, the preflight), `actors`
and `vendor_pool` (one actor per vendor account, N for a large one), `shard_window` (at most
`max_in_flight` shards out), `shard_work` (a shard graded and written), `cost_watch` (the estimate
and `--max-cost`), `governance` (what the data-governance settings allow), `metrics` (Ray metrics),
`console` (progress and Ctrl-C), `peak_memory`, and `options` (the sweep's options and summary).
It never imports the command line (`jobs.cli`): an import contract says so.
"""
