"""Grading: the rubric panel, the hallucination audit, the scoring rules, and the estimate."""
