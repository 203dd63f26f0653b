"""What the question asks, read once: its slots, values, sides, shape, and a follow-up's
resolution from the earlier turns."""
