"""The CPU a job's sandboxes use, read while they run (what lets runs be let in by CPU).

A program that burns a known amount of its own CPU time (``time.process_time``, which a loaded
machine does not change) must show at least that in the meter; one that sleeps, next to nothing.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from suitebench.run import cpuload, sandbox

BURN = """\
import sys, time
end = float(sys.argv[1])
while time.process_time() < end:
    pass
"""


def test_a_sandbox_started_under_a_meter_is_counted(tmp_path: Path) -> None:
    (tmp_path / "burn.py").write_text(BURN)
    meter = cpuload.CpuMeter()
    assert not meter.started
    with cpuload.metering(meter):
        out = sandbox.run([sys.executable, "burn.py", "0.6"], cwd=tmp_path)
    assert out.status.value == "ok", out
    # The program burned 0.6 s of its own; the interpreter's start-up adds a little.
    assert meter.started
    assert 0.55 <= meter.seconds() < 3.0  # ticks of 10 ms


def test_a_sleeping_sandbox_reads_next_to_nothing_while_it_sleeps(tmp_path: Path) -> None:
    meter = cpuload.CpuMeter()
    readings: list[float] = []

    def sample() -> None:
        time.sleep(1.0)
        readings.append(meter.seconds())
        time.sleep(0.8)
        readings.append(meter.seconds())

    sampler = threading.Thread(target=sample)
    sampler.start()
    with cpuload.metering(meter):
        sandbox.run([sys.executable, "-c", "import time; time.sleep(2.5)"], cwd=tmp_path)
    sampler.join()
    # Between the two readings the program only slept.
    assert readings[1] - readings[0] < 0.1
    assert readings[0] < 1.0


def test_no_meter_no_count(tmp_path: Path) -> None:
    meter = cpuload.CpuMeter()
    sandbox.run([sys.executable, "-c", "pass"], cwd=tmp_path)
    assert not meter.started and meter.seconds() == 0.0


def test_a_process_tree_is_read_with_its_children() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", BURN.replace("float(sys.argv[1])", "0.4") + "time.sleep(30)\n"]
    )
    try:
        parent_and_child = cpuload.tree_members(child.pid)()
        assert child.pid in parent_and_child
        meter = cpuload.CpuMeter()
        handle = meter.add(cpuload.tree_members(child.pid))
        deadline = time.monotonic() + 60
        while meter.seconds() < 0.35 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert meter.seconds() >= 0.35  # ticks of 10 ms
        child.kill()
        child.wait()
        # Gone, its time stays counted.
        meter.drop(handle)
        assert meter.seconds() >= 0.35  # ticks of 10 ms
    finally:
        child.kill()
        child.wait()
