"""The lifecycle in the app: the Review view (what needs a decision), the project filter and the time slider."""
