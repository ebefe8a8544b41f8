"""Helpers of the Data page only: its sources (simulate, load: an upload or a real data set), the declared domain of
an upload, the scenario builder and the view of the loaded data set."""
