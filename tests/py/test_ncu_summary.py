#!/usr/bin/env python3
"""bench/ncu_summary.py: each kernel's median over its launches, ncu's per-value units converted
(ns, µs, ms; byte, Kbyte, Mbyte), the DRAM rate from bytes over time, and a file without metric rows
named."""
import gzip
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "ncu_summary.py")
HEAD = ['"ID"', '"Process ID"', '"Process Name"', '"Host Name"', '"Kernel Name"', '"Context"', '"Stream"',
        '"Block Size"', '"Grid Size"', '"Device"', '"CC"', '"Section Name"', '"Metric Name"', '"Metric Unit"',
        '"Metric Value"']


def row(op, shape, launch, kernel, metric, unit, value):
    cells = [op, shape, str(launch), "1", "bench_delta", "host", kernel, "1", "7", "(256, 1, 1)", "(128, 16, 1)",
             "0", "9.0", "Command line profiler metrics", metric, unit, value]
    return ",".join('"' + c + '"' for c in cells)


def run(path, *args):
    return subprocess.run([sys.executable, SCRIPT, path, *args], capture_output=True, text=True)


class NcuSummaryTest(unittest.TestCase):
    def write(self, lines, gz=False):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "ncu.csv" + (".gz" if gz else ""))
        with (gzip.open(path, "wt") if gz else open(path, "w")) as f:
            f.write("\n".join(lines) + "\n")
        return path

    def test_median_units_and_rate(self):
        k = "void grad_chunk_kernel<0, 128, 128, 1, 512, 125>(DeltaParams)"
        lines = ['"deltanet","0",' + ",".join(HEAD)]
        # three launches: 400 µs as ns, as µs and as ms; 600 MB read and 200 MB written in three units
        for launch, (t, tu, rd, ru) in enumerate([("400,000", "ns", "600,000,000", "byte"), ("400", "us", "600,000", "Kbyte"),
                                                  ("0.5", "ms", "600", "Mbyte")]):
            lines += [row("deltanet", "0", launch, k, "gpu__time_duration.sum", tu, t),
                      row("deltanet", "0", launch, k, "dram__bytes_read.sum", ru, rd),
                      row("deltanet", "0", launch, k, "dram__bytes_write.sum", "Mbyte", "200"),
                      row("deltanet", "0", launch, k, "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", "60")]
        r = run(self.write(lines, gz=True), "--bw", "4")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = [l for l in r.stdout.splitlines() if "grad_chunk" in l]
        self.assertEqual(len(out), 1, r.stdout)
        cols = out[0].split()
        self.assertEqual(cols[2], "grad_chunk<0,128,128,1,512,125>")
        self.assertEqual(cols[3], "3")  # launches
        self.assertEqual(float(cols[4]), 400.0)  # median µs
        self.assertEqual(float(cols[5]), 600.0)  # MB read
        self.assertEqual(float(cols[6]), 200.0)
        self.assertEqual(float(cols[7]), 2.0)  # (600 + 200) MB / 400 µs = 2 TB/s
        self.assertEqual(cols[8], "50%")  # of --bw 4
        self.assertEqual(float(cols[9]), 60.0)

    def test_kernels_keep_apart_by_op_and_shape(self):
        k = "void state_bwd_wg_kernel<0, 128, 128, 128, false, true, false, false>(DeltaParams)"
        lines = [row(op, sh, 0, k, "gpu__time_duration.sum", "us", t) for op, sh, t in
                 [("deltanet", "0", "100"), ("deltanet", "4", "400"), ("gdn", "0", "120")]]
        r = run(self.write(lines))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len([l for l in r.stdout.splitlines() if "state_bwd_wg" in l]), 3, r.stdout)

    def test_no_metric_rows_is_named(self):
        r = run(self.write(['"deltanet","0",' + ",".join(HEAD), "a line of the program's own output"]))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no metric rows", r.stderr)


if __name__ == "__main__":
    unittest.main()
