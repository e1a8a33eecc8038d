"""Unpickling one lab task's grounding index: the code before (dataclasses pickled by default,
tokens and (start, end) tuples, a string object per keyword occurrence) against now, interleaved."""
import dataclasses, gc, pickle, statistics, time
from pathlib import Path
from evalcore.benchmark.instructions_only import audit_sources
from evalcore.benchmark.loader import load_benchmark
from evalcore.grounding import index as I, sources as S
from evalcore.grounding.text import keywords
from evalcore.synth.lab import generate_lab
if not Path("/tmp/ix/lab32/tasks").exists():
    generate_lab("/tmp/ix/lab32", tasks=32, seed=7)
tasks = load_benchmark("/tmp/ix/lab32/tasks").tasks
new = [pickle.dumps(S._build_index_cached(tuple((d.name, d.text) for d in audit_sources(t))), protocol=5) for t in tasks]
S._build_index_cached.cache_clear()
S._keyword_set = lambda text: frozenset(keywords(text))
del I._PickledByFields.__reduce__
old = []
for t in tasks:
    ix = S._build_index_cached(tuple((d.name, d.text) for d in audit_sources(t)))
    ix = dataclasses.replace(ix, norm=[(d.name, d.text, d.tokens, [(d.start(i), d.end(i)) for i in range(len(d.tokens))]) for d in ix.norm])
    old.append(pickle.dumps(ix, protocol=5))
def t(blobs):
    gc.disable(); t0 = time.process_time()
    for b in blobs: pickle.loads(b)
    dt = time.process_time() - t0; gc.enable(); return 1000 * dt / len(blobs)
a, b = [], []
for _ in range(8):
    b.append(t(old)); a.append(t(new))
print(f"unpickle ms per task: before {statistics.median(b):.2f} ({min(b):.2f}-{max(b):.2f}), after {statistics.median(a):.2f} ({min(a):.2f}-{max(a):.2f})")
print(f"pickle KB per task: before {sum(map(len, old))/len(old)/1024:.0f}, after {sum(map(len, new))/len(new)/1024:.0f}")
