"""A run's records: their steps and schema, encoded, hashed, read and written."""
