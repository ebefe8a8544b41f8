"""Helpers of the Reproduce page only: the experiments' runs with their progress bars, kept per server
(:mod:`.runs`), each experiment's claim, Run button and result (:mod:`.sections`), and Table 1's real data set,
run only when marked public (:mod:`.public_data`). The experiments themselves are
:mod:`dphawkes_experiments.reproduce`."""
