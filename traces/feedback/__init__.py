"""Reviewers' verdicts on runs, chained, in a folder or PostgreSQL."""
