"""Configuration: the run's settings model, how it is loaded, and its defaults (defaults.yaml)."""
