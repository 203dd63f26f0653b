"""The stores: an index folder (SQLite) or PostgreSQL, their schemas, ingest, generations,
unit vectors and the corpus's scale."""
