"""Curation in the app: the merge queue and the split dialog (embedded in the Review view, or opened from
the Edit menu)."""
