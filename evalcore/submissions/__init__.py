"""Submissions: loading the work to grade from a results folder or a manifest."""
