"""A run, its chain and a whole day verified, and its citations checked."""
