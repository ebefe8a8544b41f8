"""Arrow's compute functions that every event file's cells go through, called by name without importing
``pyarrow.compute``.

``import pyarrow.compute`` makes a Python wrapper, with a generated docstring, for each of Arrow's ~290 compute
functions: ~30 ms of CPU on the shared machine (``docs/load.md``), more than reading and fitting 10^4 events. The
functions themselves are in Arrow's registry, which ``pyarrow._compute`` (the module ``pyarrow.compute`` is built on)
calls by name with ``call_function`` — what each wrapper does, and ``Array.cast`` through it. So these are the same
functions with the same options (``tests/core/data/test_arrow_calls.py`` compares each with ``pyarrow.compute``'s);
a pyarrow without that module gets the public one, slower to import. The rarer calls (a cell that is no number,
missing cells, datetimes by pandas) still use ``pyarrow.compute``. Nothing is imported until a function is called.
"""

from __future__ import annotations


def _registry():
    """``(call_function, CastOptions)`` of Arrow's function registry."""
    try:
        from pyarrow._compute import CastOptions, call_function
    except ImportError:  # pragma: no cover - the same names, from the public module
        from pyarrow.compute import CastOptions, call_function
    return call_function, CastOptions


def cast(values, target):
    """``values.cast(target)``: Arrow's safe cast (``pyarrow.ArrowInvalid`` where a value does not convert)."""
    call_function, options = _registry()
    return call_function("cast", [values], options.safe(target))


def trim_whitespace(values):
    """``pyarrow.compute.utf8_trim_whitespace(values)``: each text cell without its leading and trailing whitespace."""
    return _registry()[0]("utf8_trim_whitespace", [values])


def dictionary_encode(values):
    """``pyarrow.compute.dictionary_encode(values)``: the distinct cells and each cell's index into them."""
    return _registry()[0]("dictionary_encode", [values])
