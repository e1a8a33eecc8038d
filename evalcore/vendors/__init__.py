"""Judge vendors behind one protocol.

    evalcore.vendors.protocol   Vendor.complete / complete_many / aclose, JudgeRequest, JudgeReply, Usage
    evalcore.vendors.registry   create_vendor(cfg, *, budget=None) -> Vendor; the adapter names
    evalcore.vendors.adapters   one small adapter per SDK (openai, anthropic, xai) + offline and zero-work
    evalcore.vendors.budget     RateBudget: the per-account rate budget (requests and tokens per minute)
    evalcore.vendors.batch      batch mode: the queue, the journal, each vendor's batch API
    evalcore.vendors.preflight  one minimal structured call per vendor before a sweep

This package exports only the protocol; importing it imports no SDK and no other part.
"""

from evalcore.vendors.protocol import JudgeReply, JudgeRequest, Usage, Vendor

__all__ = ["JudgeReply", "JudgeRequest", "Usage", "Vendor"]
