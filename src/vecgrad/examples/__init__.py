"""Example programs written in the natural style of the user reports in shared/seeds."""
