"""git bisect run on option layouts, and its demonstration."""
