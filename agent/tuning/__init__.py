"""Evaluation sets scored and attributed, and the judge fitted from reviewers' feedback."""
