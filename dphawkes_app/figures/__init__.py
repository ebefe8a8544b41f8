"""Every figure of the app (Plotly), drawn in the colours of :mod:`dphawkes_app.figures.palette`."""
