"""``evloop``: the entry that assembles the commands, their shared options, the sample."""
