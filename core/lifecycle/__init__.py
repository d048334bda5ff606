"""How a memory ages: expiry, confidence, project scope, contradictions, decay models, forget and promote, the graph as of a date."""
