"""The decision: the sufficiency judge, the missing pieces and the status, the extractive
answer, the signals an outcome reports."""
