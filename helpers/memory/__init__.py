"""Layer 3: the memory kinds, what works on any kind, the analyses that drive them; the registered kinds, one line
each (a kind's module registers its class with ``@register``), in the order tables and charts list them."""
from helpers.memory import summary  # noqa: F401  (lesson 3)
from helpers.memory import summary_buffer  # noqa: F401  (lesson 4)
from helpers.memory import sliding_window  # noqa: F401  (the lesson before 3)
