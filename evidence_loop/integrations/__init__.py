"""Retrievers for chatbot frameworks, each behind its own extra.

- ``evidence_loop.integrations.langchain.EvidenceLoopRetriever``: a langchain-core ``BaseRetriever``
  (``pip install 'evidence-loop[langchain]'``);
- ``evidence_loop.integrations.llamaindex.EvidenceLoopRetriever``: a LlamaIndex retriever returning
  ``NodeWithScore`` (``pip install 'evidence-loop[llamaindex]'``).

Both ask the evidence loop (in process, or a remote ``evloop serve``) through :class:`Asker` and
hand back the evidence of an answered question; a refusal is no documents, with the outcome kept
(``refusal_message(retriever.last_outcome)``: the words for the end user, in the question's language).
"""

from evidence_loop.integrations.source import Asker, evidence_metadata, refusal_message, refused

__all__ = ["Asker", "evidence_metadata", "refusal_message", "refused"]
