#!/usr/bin/env python3
"""bench/accuracy_vs_fla.py's run_with_retries: a run that fails with a transient CUDA error (out of
memory, device busy) is tried again after growing pauses; any other failure, or the last attempt's,
raises with the command's stderr. Runs without torch, h5py or FLA (stand-ins for the imports)."""
import os
import sys
import tempfile
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
for name in ("h5py", "numpy", "fla_accuracy"):
    sys.modules.setdefault(name, types.ModuleType(name))
if "torch" not in sys.modules:
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(is_available=lambda: False)
    sys.modules["torch"] = torch
import accuracy_vs_fla as acc  # noqa: E402


def failing_then_ok(tmp, failures, message):
    """A command that exits 1 with `message` on stderr its first `failures` runs, then 0."""
    counter = os.path.join(tmp, "count")
    code = (f"import sys,os\np={counter!r}\nn=int(open(p).read()) if os.path.exists(p) else 0\n"
            f"open(p,'w').write(str(n+1))\n"
            f"sys.exit(0) if n >= {failures} else (sys.stderr.write({message!r}), sys.exit(1))")
    return [sys.executable, "-c", code], counter


class RetryTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.pauses = []

    def runs(self, counter):
        return int(open(counter).read())

    def test_transient_errors_are_run_again(self):
        msg = "rewy: error: CUDA error 2 (out of memory) in cudaDeviceSynchronize()"
        cmd, counter = failing_then_ok(self.tmp, 2, msg)
        acc.run_with_retries(cmd, attempts=4, pause_s=3, sleep=self.pauses.append)
        self.assertEqual(self.runs(counter), 3)
        self.assertEqual(self.pauses, [3, 6])

    def test_busy_device_is_transient(self):
        msg = "rewy: error: CUDA error 46 (CUDA-capable device(s) is/are busy or unavailable)"
        cmd, counter = failing_then_ok(self.tmp, 1, msg)
        acc.run_with_retries(cmd, attempts=2, pause_s=1, sleep=self.pauses.append)
        self.assertEqual(self.runs(counter), 2)

    def test_other_errors_raise_at_once(self):
        cmd, counter = failing_then_ok(self.tmp, 5, "rewy: error: --op: unknown operator 'x'")
        with self.assertRaisesRegex(RuntimeError, r"attempt 1 of 4\): rewy: error: --op: unknown operator"):
            acc.run_with_retries(cmd, attempts=4, pause_s=1, sleep=self.pauses.append)
        self.assertEqual(self.runs(counter), 1)
        self.assertEqual(self.pauses, [])

    def test_the_last_attempt_raises(self):
        cmd, counter = failing_then_ok(self.tmp, 9, "CUDA error 2 (out of memory)")
        with self.assertRaisesRegex(RuntimeError, r"attempt 3 of 3\): CUDA error 2 \(out of memory\)"):
            acc.run_with_retries(cmd, attempts=3, pause_s=2, sleep=self.pauses.append)
        self.assertEqual(self.runs(counter), 3)
        self.assertEqual(self.pauses, [2, 4])


if __name__ == "__main__":
    unittest.main()
