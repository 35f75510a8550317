"""Shared by the tooling tests: bench_delta --csv files and running a bench/ script."""
import os
import subprocess
import sys

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
HEADER = "op,B,T,H,D,policy,gates,dir,algo,median_ms,min_ms\n"


def write_csv(d, name, rows):
    """A bench_delta --csv file of the given data rows in directory d."""
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(HEADER + "".join(r + "\n" for r in rows))
    return path


def run_script(script, *args):
    """bench/<script> with args: its CompletedProcess (text output)."""
    return subprocess.run([sys.executable, os.path.join(BENCH, script), *args], capture_output=True, text=True)
