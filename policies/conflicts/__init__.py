"""Conflicts: the candidates (two windows, two values for one slot), what differs between
them, and the rule-based adjudicator."""
