"""Whole histories: tool pairing, trimming to a budget, a rolling memory, compaction and stats."""
