"""Grading the notebooks' exercises, a layer of its own (above display, below model).

``verdict`` is what a check says and how a notebook shows it (what is wrong first, a hint on a second
failure or on request); ``runner`` runs a student's code with bounds on time and calls; each exercise
has its own module (``calls`` 1.1, ``window`` 2.1, ``rule_check`` 3.1, ``overflows`` 4.1,
``summary_cap`` 5.1), whose right answers come from ``helpers.memory`` and whose named mistakes are
small functions or mutants of that real rule.
"""
