"""Which windows become evidence: a window's signals and gaps, how it grows, which windows
are selected and pinned, and how much of their surroundings the question's shape reads."""
