#!/usr/bin/env python3
"""Which tables and indexes each write-ahead log's commits wrote.

    python3 scripts/wal_pages.py DB WAL [WAL ...]

DB is the store the logs belong to (its pages are mapped to b-tree names through SQLite's
`dbstat`); each WAL is one log, e.g. the per-turn copies the turn bench keeps with
`CHALIE_BENCH_WAL=<dir>` (`<dir>/<size>/turn-*.wal` and `<dir>/<size>/chalie.db`). Prints every
commit's frames by b-tree, then the frames per log by b-tree, averaged over the logs: what a
turn's commits cost in pages, and where.
"""
import collections
import sqlite3
import struct
import sys


def commits(path):
    """The page numbers of each commit in the log at `path`, in order (frames whose salts
    match the header: the live part of a log that was started over)."""
    data = open(path, "rb").read()
    if len(data) < 32:
        return []
    page_size = struct.unpack(">I", data[8:12])[0]
    salts = data[16:24]
    out, frames, off = [], [], 32
    while off + 24 + page_size <= len(data):
        page, size_after = struct.unpack(">II", data[off:off + 8])
        if data[off + 8:off + 16] != salts:
            break
        frames.append(page)
        if size_after:
            out.append(frames)
            frames = []
        off += 24 + page_size
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
    owner = {page: name for name, page in db.execute("SELECT name, pageno FROM dbstat")}
    total, logs = collections.Counter(), 0
    for path in sys.argv[2:]:
        logs += 1
        for i, frames in enumerate(commits(path)):
            names = collections.Counter(owner.get(p, f"page {p} (free now)") for p in frames)
            total.update(names)
            print(f"{path} commit {i}: {len(frames)} frames: " + ", ".join(f"{n} {k}" for n, k in names.most_common()))
    if logs:
        per = sum(total.values()) / logs
        print(f"\nper log ({logs} logs): {per:.1f} frames: "
              + ", ".join(f"{n} {k / logs:.2f}" for n, k in total.most_common()))


if __name__ == "__main__":
    main()
