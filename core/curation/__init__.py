"""Curation: semantic duplicates, entity splitting, reflections and the consolidation report."""
