"""Deep checks: what only a catalog compile catches today (issue 30), proven from the workspace index."""
