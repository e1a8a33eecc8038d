"""Batch mode: the batch queue behind the vendor protocol, the journal, and each vendor's batch API."""
