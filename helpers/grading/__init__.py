"""Grading the notebooks' exercises, a layer of its own: ``runner`` is shared; one module per exercise (``calls``
1.1, ``window`` 2.1, ``rule_check`` 3.1, ``overflows`` 4.1, ``summary_cap`` 5.1, ``capstone`` 7.1)."""
