"""The privacy session (plan, check, draw, record), the budget ledger and the exported result."""
