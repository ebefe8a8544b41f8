"""Helpers of the Privacy audit page only: its controls (:mod:`.controls`: widgets → an
:class:`~dphawkes_experiments.audit.AuditConfig`), the trials run in chunks with a progress bar and a Stop
(:mod:`.trials`), and the result drawn (:mod:`.view`). The audit itself is :mod:`dphawkes_experiments.audit`."""
