#!/usr/bin/env python3
"""bench/triton_cache.py: a packed cache restores elsewhere with its group files pointing there,
leaves IRs and autotuning results behind, and a pack cut short restores whole kernels only."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "triton_cache.py")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def make_cache(root, kernels, cubin_bytes=64):
    """A Triton-like cache: one folder per kernel key with metadata, binary, IRs and a group file."""
    for k in range(kernels):
        d = os.path.join(root, f"KEY{k:03d}")
        os.makedirs(d)
        files = {"kern.json": json.dumps({"name": f"kern{k}"}).encode(), "kern.cubin": os.urandom(cubin_bytes),
                 "kern.ptx": b"ptx", "kern.ttir": b"ttir", "kern.autotune.json": b"{}"}
        for name, body in files.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(body)
        group = {n: os.path.join(d, n) for n in ("kern.json", "kern.cubin", "kern.ptx", "kern.ttir")}
        with open(os.path.join(d, "__grp__kern.json"), "w") as f:
            json.dump({"child_paths": group}, f)


class TritonCacheTest(unittest.TestCase):
    def test_round_trip_rewrites_group_paths_and_drops_irs(self):
        with tempfile.TemporaryDirectory() as t:
            src, pack, dst = (os.path.join(t, n) for n in ("src", "pack", "dst"))
            make_cache(src, 3)
            r = run("pack", src, pack)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("packed 9 of 18 files", r.stdout)
            r = run("unpack", pack, dst)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(sorted(os.listdir(os.path.join(dst, "KEY001"))), ["__grp__kern.json", "kern.cubin", "kern.json"])
            with open(os.path.join(src, "KEY001", "kern.cubin"), "rb") as a, open(os.path.join(dst, "KEY001", "kern.cubin"), "rb") as b:
                self.assertEqual(a.read(), b.read())
            with open(os.path.join(dst, "KEY001", "__grp__kern.json")) as f:
                paths = json.load(f)["child_paths"]
            self.assertEqual(paths["kern.cubin"], os.path.join(os.path.realpath(dst), "KEY001", "kern.cubin"))
            self.assertTrue(all(p.startswith(os.path.realpath(dst)) for p in paths.values()))

    def test_cut_pack_restores_only_whole_kernels(self):
        with tempfile.TemporaryDirectory() as t:
            src, pack, dst = (os.path.join(t, n) for n in ("src", "pack", "dst"))
            make_cache(src, 40, cubin_bytes=100_000)  # incompressible: the cut lands inside the kernels
            self.assertEqual(run("pack", src, pack).returncode, 0)
            part = os.path.join(pack, sorted(os.listdir(pack))[0])
            with open(part, "rb") as f:
                data = f.read()
            with open(part, "wb") as f:
                f.write(data[: len(data) // 2])
            r = run("unpack", pack, dst)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("cut short", r.stdout)
            restored = sorted(os.listdir(dst))
            self.assertTrue(0 < len(restored) < 40, restored)
            for key in restored:  # a group file only where its members are all there
                names = os.listdir(os.path.join(dst, key))
                if "__grp__kern.json" in names:
                    self.assertIn("kern.cubin", names)
                    self.assertIn("kern.json", names)

    def test_damaged_or_missing_pack(self):
        with tempfile.TemporaryDirectory() as t:
            pack, dst = os.path.join(t, "pack"), os.path.join(t, "dst")
            r = run("unpack", pack, dst)
            self.assertEqual(r.returncode, 0)
            self.assertIn("nothing to unpack", r.stdout)
            os.makedirs(pack)
            with open(os.path.join(pack, "triton-cache.tar.xz.00"), "wb") as f:
                f.write(b"not an archive")
            r = run("unpack", pack, dst)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("damaged pack", r.stderr)
            r = run("pack", os.path.join(t, "no-such-cache"), pack)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("no cache at", r.stderr)


if __name__ == "__main__":
    unittest.main()
