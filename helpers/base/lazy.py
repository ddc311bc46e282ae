"""Names a module offers but imports only when first used (PEP 562), for the one-import modules above every
layer (``helpers/lesson3.py`` and its like): one import line serves notebooks with and without the SDK."""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_exports(module_name: str, sources: Mapping[str, str]
                 ) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for the module ``module_name``, which offers the names of
    ``sources`` (module -> names separated by spaces, like the import lines they stand for)."""
    where = {name: module for module, names in sources.items() for name in names.split()}

    def __getattr__(name: str) -> object:
        if name not in where:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}; it offers "
                                 f"{', '.join(sorted(where))}")
        source = importlib.import_module(where[name])
        if not hasattr(source, name):  # a submodule (``drift`` of ``helpers.measure``)
            importlib.import_module(f"{where[name]}.{name}")
        return getattr(source, name)

    return __getattr__, lambda: sorted(where), sorted(where)
