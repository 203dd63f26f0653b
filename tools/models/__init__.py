"""The models behind seams: the embedder, the reranker and the LLM client, with their
configurations, caches and recordings."""
