"""The learning loop (docs/architecture.md "The learning loop"): shadow A/B logging, implicit feedback, NDCG@K and Lift@K
over the logged searches, and the auto-tuner (seed ``000`` "Auto-Tuning", seed ``004`` "A/B Testing:
Shadow Mode"). Pure re-rank: every metric replays logged candidate sets, with no SQL and no model call.
"""
