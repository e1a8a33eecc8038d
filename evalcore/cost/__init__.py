"""What a sweep costs, in one room: the estimate before it starts (`estimate.py`: every request built
as grading builds it, priced, with the prompt-cache model replayed), the spending cap while it runs
(`cost_cap.py`: each call reserves its worst case), and the vendors' prompt-caching rules both use
(`prompt_cache.py`). The price of a call itself is one rule in the configuration
(`evalcore.config.models.Price.bill`)."""
