"""Grading the notebooks' exercises, a layer of its own (above display, below model): ``verdict`` and ``runner``
are shared; each exercise has its module (``calls`` 1.1, ``window`` 2.1, ``rule_check`` 3.1, ``overflows`` 4.1,
``summary_cap`` 5.1, ``capstone`` 7.1), whose right answers come from ``helpers.memory``."""
