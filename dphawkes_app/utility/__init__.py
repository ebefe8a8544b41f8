"""The Privacy–utility page's helpers: its controls (:mod:`.controls`), the sweeps it runs into the session's store
of finished cells (:mod:`.store`) and what it draws from them (:mod:`.view`). The sweeps themselves are experiments
of :mod:`dphawkes_experiments.sweep`."""
