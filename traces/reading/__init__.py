"""Runs listed, shown and compared."""
