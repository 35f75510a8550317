#!/usr/bin/env python3
"""Carries FLA's compiled Triton kernels from one device session to the next.

On a fresh GPU machine most of FLA's first use is Triton compilation (CPU-bound: 300+ s for the
same-input sweep of one op), not measurement. The cache it leaves (TRITON_CACHE_DIR, ~200 MB) is
mostly intermediate IR; a kernel is reloaded from its metadata JSON and its binary alone, which
compress to a size that the device's returned files (8 files of <= 16 MiB) and its carried
folders (64 MiB in all) allow.

  triton_cache.py pack CACHE_DIR OUT_DIR     writes OUT_DIR/triton-cache.tar.xz.NN (<= 15 MiB each)
  triton_cache.py unpack PACK_DIR CACHE_DIR  restores them, rewriting Triton's group files, which
                                             name their members by absolute path

Autotuning results (*.autotune.json) are left out on purpose: FLA picks its configuration again
on every machine, measured in the same run as ours. Kernels whose key no longer matches (another
Triton, driver or FLA version) are simply compiled again.
"""
import io
import json
import lzma
import os
import sys
import tarfile

PART_BYTES = 15 * 1024 * 1024
PREFIX = "triton-cache.tar.xz."
ORIGIN = "ORIGIN"  # the packed cache's absolute path, for rewriting the group files


def keep(name):
    if name.endswith(".autotune.json"):
        return False
    return name.endswith(".json") or name.endswith(".cubin")


MAX_BYTES = 45 * 1024 * 1024  # the carried folders' share of the 64 MiB a device call takes


def pack(cache_dir, out_dir):
    cache_dir = os.path.realpath(cache_dir)
    if not os.path.isdir(cache_dir):
        sys.exit(f"triton_cache: no cache at {cache_dir}")
    buf = io.BytesIO()
    kept = total = 0
    with tarfile.open(fileobj=buf, mode="w:xz", preset=6) as tar:
        origin = cache_dir.encode()
        info = tarfile.TarInfo(ORIGIN)
        info.size = len(origin)
        tar.addfile(info, io.BytesIO(origin))
        for key in sorted(os.listdir(cache_dir)):
            kdir = os.path.join(cache_dir, key)
            if not os.path.isdir(kdir):
                continue
            if buf.tell() >= MAX_BYTES:  # (compressed bytes flushed so far: close to the final size)
                print(f"triton_cache: stopped at {MAX_BYTES >> 20} MiB; later kernels are left out")
                break
            # The group file last: a pack cut short inside this kernel leaves it uncached, not half there.
            for name in sorted(os.listdir(kdir), key=lambda n: (n.startswith("__grp__"), n)):
                path = os.path.join(kdir, name)
                total += 1
                if os.path.isfile(path) and keep(name):
                    tar.add(path, arcname=f"{key}/{name}")
                    kept += 1
    data = buf.getvalue()
    os.makedirs(out_dir, exist_ok=True)
    for old in os.listdir(out_dir):
        if old.startswith(PREFIX):
            os.remove(os.path.join(out_dir, old))
    parts = [data[i:i + PART_BYTES] for i in range(0, len(data), PART_BYTES)]
    for i, part in enumerate(parts):
        with open(os.path.join(out_dir, f"{PREFIX}{i:02d}"), "wb") as f:
            f.write(part)
    print(f"triton_cache: packed {kept} of {total} files from {cache_dir} into {len(parts)} part(s), "
          f"{len(data) / 2**20:.1f} MiB")


def xz_stream_whole(data):
    """Whether data is a whole xz stream: tarfile's stream reader ends quietly (no error) when a
    cut lands inside a member's header, so the cut is checked on the compressed stream itself."""
    d = lzma.LZMADecompressor()
    try:
        d.decompress(data, max_length=1 << 20)
        while not d.eof and not d.needs_input:
            d.decompress(b"", max_length=1 << 20)
    except lzma.LZMAError:
        return False
    return d.eof


def unpack(pack_dir, cache_dir):
    names = sorted(n for n in os.listdir(pack_dir) if n.startswith(PREFIX)) if os.path.isdir(pack_dir) else []
    if not names:
        print(f"triton_cache: nothing to unpack in {pack_dir}")
        return
    data = b"".join(open(os.path.join(pack_dir, n), "rb").read() for n in names)
    cache_dir = os.path.realpath(cache_dir)
    os.makedirs(cache_dir, exist_ok=True)
    # Streamed, so a pack with its last parts missing still restores the kernels before the cut.
    restored, origin, note = 0, None, "complete"
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r|xz") as tar:
            for m in tar:
                body = tar.extractfile(m).read() if m.isfile() else None
                if m.name == ORIGIN:
                    origin = body.decode()
                    continue
                parts = m.name.split("/")
                if body is None or origin is None or len(parts) != 2 or parts[0] in ("", "..") or parts[1] in ("", ".."):
                    sys.exit(f"triton_cache: unexpected member {m.name!r} in the pack")
                dst = os.path.join(cache_dir, *parts)
                if os.path.exists(dst):
                    continue  # a kernel this machine has compiled already
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                if parts[1].startswith("__grp__"):
                    group = json.loads(body)
                    group["child_paths"] = {
                        child: os.path.join(cache_dir, os.path.relpath(path, origin))
                        for child, path in group.get("child_paths", {}).items()
                    }
                    body = json.dumps(group).encode()
                tmp = dst + ".tmp"
                with open(tmp, "wb") as f:
                    f.write(body)
                os.replace(tmp, dst)
                restored += 1
    except (tarfile.TarError, EOFError, OSError, ValueError) as e:
        if origin is None:
            sys.exit(f"triton_cache: {pack_dir} holds a damaged pack ({e}); remove it or pack again")
        note = f"cut short ({e}): the kernels after the cut compile again"
    if note == "complete" and not xz_stream_whole(data):
        note = "cut short (the xz stream ends early): the kernels after the cut compile again"
    print(f"triton_cache: restored {restored} files into {cache_dir} ({len(names)} part(s), packed at {origin}; {note})")


def main(argv):
    if len(argv) != 4 or argv[1] not in ("pack", "unpack"):
        sys.exit(__doc__)
    (pack if argv[1] == "pack" else unpack)(argv[2], argv[3])


if __name__ == "__main__":
    main(sys.argv)
