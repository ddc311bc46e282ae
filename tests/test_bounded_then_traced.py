"""After an exercise check has stopped a runaway answer, traced code still runs: a debugger or coverage
(``sys.settrace``) in the same kernel must not hang on its next call. Run in a child process, so that a
regression fails here with a timeout instead of hanging the test run."""
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys
    from helpers.base.bounded import TimedOut, run_bounded

    def runaway():
        while True:
            pass

    try:
        run_bounded(runaway, seconds=0.2)
    except TimedOut:
        print("stopped")
    sys.settrace(lambda frame, event, arg: None)   # a debugger attaches

    def answer():
        return 42

    print("traced call returned", answer())
""")


def test_a_traced_call_returns_after_a_check_stopped_a_runaway_answer():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["stopped", "traced call returned 42"]
