"""One consistent view of a generation for one question: BM25, dense recall, passages."""
