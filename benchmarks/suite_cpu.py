"""CPU seconds of the whole suite, run as the README runs it (``pytest``), every process counted: the kernels nbval
starts, JupyterLab and Chromium for the browser test. Prints figures; asserts nothing (docs/testing.md).

Where this process may make a cgroup (root on Linux, cgroup v1 ``cpuacct`` or v2), every descendant is counted
there, Chromium's renderers included; elsewhere the figure is the CPU time of the children pytest waited for.

    python benchmarks/suite_cpu.py [pytest arguments]
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

GROUPS = {Path("/sys/fs/cgroup/cpuacct"): "cpuacct.usage", Path("/sys/fs/cgroup"): "cpu.stat"}


def counted_group() -> tuple[Path, str] | None:
    """A fresh cgroup whose CPU counter covers every process started in it, or None where none can be made."""
    for root, counter in GROUPS.items():
        if (root / counter).exists():
            group = root / f"suite_cpu_{os.getpid()}"
            try:
                group.mkdir()
            except OSError:
                return None
            return group, counter
    return None


def seconds(group: Path, counter: str) -> float:
    text = (group / counter).read_text()
    return int(text) / 1e9 if counter == "cpuacct.usage" else int(text.split()[1]) / 1e6  # v2: "usage_usec N"


def main() -> None:
    group, started = counted_group(), time.monotonic()
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *sys.argv[1:]]
    run = subprocess.Popen(pytest, preexec_fn=(lambda: (group[0] / "cgroup.procs").write_text(str(os.getpid())))
                           if group else None)
    code, wall = run.wait(), time.monotonic() - started
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"pytest exit {code}, {wall:.0f} s wall; CPU of the children pytest waited for: "
          f"{children.ru_utime + children.ru_stime:.0f} s")
    if group:
        print(f"CPU of every process of the run (cgroup {group[1]}): {seconds(*group):.0f} s")
        group[0].rmdir()


if __name__ == "__main__":
    main()
