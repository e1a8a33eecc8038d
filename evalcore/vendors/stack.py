"""The vendor stack, built in one place: adapter → batching → reuse, with the spending cap on the
parts that pay.

Grading calls a vendor through layers, innermost first:

1. the **adapter** (`registry.create_vendor`), the entries of one account on one rate budget
   (`sharding.create_account_vendors`; one of N actors of an account: 1/N of its limits);
2. with batch mode on and a batch API for the vendor, the **batching queue**
   (`batch.queue.BatchingVendor`), which journals each batch in the run folder and falls back to
   the adapter online;
3. **reuse** (`reuse.ReusingVendor`): stored calls of this run and of `--reuse` runs are served
   at zero cost, identical calls in flight share one request.

With a spending cap (`--max-cost`), the layers that pay — the adapter, and each batch before it is
submitted — reserve their worst case on the `Ledger`; a stored answer never reaches them. Why one
builder: the sweep's vendor actors and `tribunal grade` built the stack apart, and the cap was
attached by probing for an attribute; a layer added or reordered here is added for both.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass

from evalcore.config.models import BatchConfig, VendorConfig
from evalcore.cost.cost_cap import Ledger
from evalcore.vendors.adapters.common import AdapterBase
from evalcore.vendors.batch.journal import BatchJournal
from evalcore.vendors.batch.queue import BatchingVendor
from evalcore.vendors.protocol import Vendor
from evalcore.vendors.registry import create_batch_api, has_batch_api
from evalcore.vendors.reuse import ReusingVendor
from evalcore.vendors.sharding import create_account_vendors


@dataclass(frozen=True)
class BatchMode:
    """Batch mode's part of the stack: the settings, where the journal lives, and `--detach`."""

    config: BatchConfig
    run_uri: str
    """The run folder whose journal the batches are written to (and found again from)."""
    label: str
    """What each batch is labelled with at the vendor (the run id)."""
    detach: bool = False


@dataclass(frozen=True)
class VendorStack:
    """One entry's layers: what grading calls (`vendor`) and the parts under it."""

    adapter: Vendor
    """The online adapter (its wire slots and budget)."""
    batching: BatchingVendor | None
    vendor: ReusingVendor


def build_stacks(
    cfgs: Sequence[VendorConfig],
    *,
    run_id: str,
    stored: Callable[[str], MutableMapping[str, tuple[str, str]]] | None = None,
    shards: int = 1,
    ledger: Ledger | None = None,
    batch: BatchMode | None = None,
) -> dict[str, VendorStack]:
    """The stack of every entry in `cfgs` (the entries of one account share its budget).

    `stored(name)` gives the entry's stored calls (`storage.store.stored_calls` over this run and
    its `--reuse` runs; none: nothing stored yet); `shards`: this stack is one of N actors of the
    account; `ledger`: the spending cap's ledger; `batch`: batch mode (off when None or disabled).
    """
    adapters = create_account_vendors(list(cfgs), shards)
    stacks: dict[str, VendorStack] = {}
    for cfg in cfgs:
        adapter = adapters[cfg.name]
        if ledger is not None and isinstance(adapter, AdapterBase):
            adapter.spend_guard = ledger
        inner: Vendor = adapter
        batching: BatchingVendor | None = None
        if batch is not None and batch.config.enabled and has_batch_api(cfg):
            # the journal is (re)read here: a restarted actor or a re-run polls the same batches
            journal = BatchJournal.load(batch.run_uri, cfg.name)
            batching = BatchingVendor(create_batch_api(cfg), journal, batch.config, online=adapter,
                                      detach=batch.detach, label=batch.label)
            if ledger is not None:  # each batch reserves its worst case before it is submitted
                batching.spend_guard = ledger
            inner = batching
        store = stored(cfg.name) if stored is not None else {}
        stacks[cfg.name] = VendorStack(adapter=adapter, batching=batching, vendor=ReusingVendor(inner, store, run_id))
    return stacks
