"""The Streamlit app's helpers: shared page code, the budget view, Plotly figures, presets, URL state and
guidance. ``app.py`` and ``pages/`` (at the repository root, where Streamlit wants them) import from here."""
