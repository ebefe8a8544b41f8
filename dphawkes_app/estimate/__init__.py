"""Helpers of the Estimate page only: the release flow, following a change of data, the comparison with the
other methods and the downloads."""
