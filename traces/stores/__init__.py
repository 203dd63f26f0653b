"""The trace stores (a folder, PostgreSQL) and what they keep."""
