"""The ``dphawkes`` command line (:mod:`.main`): argument parsing over the core and the experiments."""
