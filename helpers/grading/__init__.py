"""Grading the notebooks' exercises: ``runner`` is shared; one module per exercise (``calls`` 1.1, ``window`` 2.1,
``rule_check`` 3.1, ``overflows`` 4.1, ``summary_cap`` 5.1, ``capstone`` 7.1). ``EXERCISES`` gives each one's
notebook, the name its answer cell defines and its check call: the marks that find its cells in a notebook."""
EXERCISES = (("1.1", "01_summary_schedule", "predicted_calls", "check_calls_formula("),
             ("2.1", "02_summary_memory_run", "WindowMemory", "check_window_memory("),
             ("3.1", "03_drift_measurement", "rule_kept", "check_rule_check("),
             ("4.1", "04_budget_analysis", "overflows_at", "check_overflows_at("),
             ("5.1", "05_summary_buffer_run", "cap_summary", "check_summary_cap("),
             ("7.1", "07_strategies_side_by_side", "CHOICE", "check_cheapest("))
