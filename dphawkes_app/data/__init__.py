"""Helpers of the Data page only: the declared domain of an upload and the scenario builder."""
