"""One small adapter per vendor SDK, behind the protocol in evalcore.vendors.protocol."""
