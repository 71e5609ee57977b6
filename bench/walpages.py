#!/usr/bin/env python3
"""walpages.py DB WAL MESSAGES: the pages a run wrote to SQLite's WAL,
by commit and by B-tree (table or index), from a copy of the database
and of its WAL that no checkpoint has reset (bench/walpages.sh keeps a
read transaction open for that).

A page a commit changes is one WAL frame (two pwrite calls, and one more
when a checkpoint copies it back): the frames a message costs are what
the store's commits cost in writes, whatever the load of the machine.
Only the commits from the first that writes the attempts table (the first
claim) on are counted: the sending's claims, marks and outcomes.
"""
import collections
import sqlite3
import struct
import sys


def main():
    db, wal, msgs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = open(wal, "rb").read()  # before SQLite's last close checkpoints it away
    con = sqlite3.connect(db)  # reads the WAL beside it
    owner = dict((p, n) for n, p in con.execute("SELECT name, pageno FROM dbstat"))
    con.close()
    size = struct.unpack(">I", data[8:12])[0]
    commits, cur, off = [], [], 32
    while off + 24 + size <= len(data):
        page, after = struct.unpack(">II", data[off:off + 8])
        cur.append(page)
        off += 24 + size
        if after:  # a commit frame holds the database's size after it
            commits.append(cur)
            cur = []
    first = next((i for i, c in enumerate(commits) if any(owner.get(p) == "attempts" for p in c)), len(commits))
    sending = commits[first:]
    frames = sum(len(c) for c in sending)
    by = collections.Counter(owner.get(p, "(freed or new)") for c in sending for p in c)
    print("before the first claim: %d commits, %d frames (not counted)" % (first, sum(len(c) for c in commits[:first])))
    print("sending: %d commits, %d frames, %.1f a commit, %.3f a message (%d messages)" % (
        len(sending), frames, frames / max(len(sending), 1), frames / msgs, msgs))
    print("frames a message, by B-tree (and a commit):")
    for name, n in by.most_common(25):
        print("  %6.3f  %6.2f  %s" % (n / msgs, n / max(len(sending), 1), name))


if __name__ == "__main__":
    main()
