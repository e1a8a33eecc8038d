"""Tribunal's doubles: what stands in for the outside world in tests, the demo and benchmarks.

* `emulators/` — local servers on 127.0.0.1 speaking each vendor's wire protocol (OpenAI, Anthropic,
  xAI; batch APIs included), checked against the vendors' published schemas by the conformance
  suite (`tests/doubles/emulators/`);
* `offline_judge.py` — the heuristic judge and auditor behind the offline vendor and the emulators'
  default answers;
* `adapters/` — the `offline` vendor (the heuristics in-process, no network) and the `zero` vendor
  (a fixed valid answer at once, for measuring orchestration alone), plugged into the library's
  registry through the `tribunal.adapters` entry points (pyproject.toml);
* `synth/` — synthetic submissions with known ground truth, the sample widened, the lab benchmark.

The library (`evalcore`) never imports this package (an import contract says so); the command
line imports it only for what stands in: emulated mode, `tribunal emulate`, `tribunal synth`.
"""
