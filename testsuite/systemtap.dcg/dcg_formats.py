#!/usr/bin/python3
"""Checks the call graph's output formats (systemtap.dcg/formats.exp) with
their own parsers and prints what the test compares exactly: the
structure, never the times. Names are printed with Python's
unicode_escape (a newline as \\n, \\001 as \\x01, U+00FF as \\xff).
Exits 1 with "BAD: why" lines when a check fails.

  dcg_formats.py chrome FILE   the JSON parses; per thread: a thread_name
      "execname(tid)" and a process_name, every E ends the innermost open
      B of the same name, times never go back, nothing is left open.
      Prints per thread "thread execname" then ->NAME / <-NAME lines
      indented by depth (E names without the " (signal SIGX)" mark, as
      the tree prints returns), ~NAME after the <-NAME of a frame marked
      unwound (an instant event at its E), and "spans ok" when each B..E
      span holds its children's.
  dcg_formats.py chrome-count FILE   the same checks, reading a trace of
      any size one event a line (as ustap writes it); prints the number
      of B events per name, sorted.
  dcg_formats.py folded FILE   each line is FRAMES WEIGHT with an integer
      weight; prints the lines with the first frame's pid as PID, sorted.
  dcg_formats.py sum-folded FILE   prints the sum of the weights.
  dcg_formats.py graph FILE    the graph's self times add up to the totals
      of the top paths (exactly, in ns); prints calls and path per line.
  dcg_formats.py report FILE   the self times add up to the total of the
      outermost function; prints calls and function per line.
"""
import json
import re
import sys

bad = []


def esc(s):
    return s.encode("unicode_escape").decode("ascii")


def chrome(path):
    with open(path, "rb") as f:
        data = json.loads(f.read().decode("utf-8"))
    events = data["traceEvents"] if isinstance(data, dict) else data
    names, procs = {}, {}
    order, stacks, last, lines, spans_ok = [], {}, {}, {}, True
    for e in events:
        key = (e["pid"], e["tid"])
        if e["ph"] == "M":
            if e["name"] == "thread_name":
                names[key] = e["args"]["name"]
            elif e["name"] == "process_name":
                procs[e["pid"]] = e["args"]["name"]
            continue
        if e["ph"] == "i":
            # a frame left without returning: "unwound NAME", right at its E
            st = stacks.get(key, [])
            if e.get("s") != "t" or float(e["ts"]) != last.get(key) or not lines.get(key) or \
                    lines[key][-1] != " " * len(st) + "<-" + esc(re.sub(r"^unwound ", "", e["name"])):
                bad.append("instant event %r not at the end of its frame" % e["name"])
            else:
                lines[key].append(" " * len(st) + "~" + esc(re.sub(r"^unwound ", "", e["name"])))
            continue
        if e["ph"] not in ("B", "E"):
            bad.append("event of phase %r" % e["ph"])
            continue
        if key not in stacks:
            order.append(key)
            stacks[key], lines[key], last[key] = [], [], -1.0
        ts = float(e["ts"])
        if ts < last[key]:
            bad.append("time goes back on %r: %r after %r" % (key, ts, last[key]))
        last[key] = ts
        st = stacks[key]
        if e["ph"] == "B":
            lines[key].append(" " * len(st) + "->" + esc(e["name"]))
            st.append([e["name"], ts, 0.0])
        else:
            if not st or st[-1][0] != e["name"]:
                bad.append("E %r does not end the open B (%r)" % (e["name"], st[-1][0] if st else None))
                continue
            name, t0, inner = st.pop()
            if inner > ts - t0 + 1e-6:
                spans_ok = False
            if st:
                st[-1][2] += ts - t0
            shown = re.sub(r" \(signal SIG[A-Z0-9]+\)$", "", name)
            lines[key].append(" " * len(st) + "<-" + esc(shown))
    for key in order:
        pid, tid = key
        want = "%s(%d)" % (procs.get(pid, "?"), tid)
        if names.get(key) != want:
            bad.append("thread %r is named %r, not %r" % (key, names.get(key), want))
        if stacks[key]:
            bad.append("left open on %r: %r" % (key, [f[0] for f in stacks[key]]))
        print("thread " + procs.get(pid, "?"))
        for l in lines[key]:
            print(l)
    if spans_ok:
        print("spans ok")


def chrome_count(path):
    counts, stacks, last = {}, {}, {}
    with open(path, "rb") as f:
        head = f.readline()
        if head != b'{"traceEvents":[\n':
            bad.append("first line %r" % head)
        for raw in f:
            line = raw.decode("utf-8").rstrip("\n")
            if line.startswith("]"):
                json.loads('{"traceEvents":[' + line)
                break
            e = json.loads(line[:-1] if line.endswith(",") else line)
            key = (e["pid"], e["tid"])
            if e["ph"] in ("M", "i"):
                continue
            ts = float(e["ts"])
            if ts < last.get(key, -1.0):
                bad.append("time goes back on %r" % (key,))
            last[key] = ts
            st = stacks.setdefault(key, [])
            if e["ph"] == "B":
                st.append(e["name"])
                counts[e["name"]] = counts.get(e["name"], 0) + 1
            elif not st or st.pop() != e["name"]:
                bad.append("E %r does not end the open B" % e["name"])
        else:
            bad.append("no closing line")
    for key, st in stacks.items():
        if st:
            bad.append("left open on %r: %r" % (key, st))
    for name in sorted(counts):
        print("B %s %d" % (esc(name), counts[name]))


def folded_lines(path):
    out = []
    with open(path, "rb") as f:
        for raw in f.read().decode("utf-8").split("\n"):
            if raw == "":
                continue
            m = re.match(r"^(\S.*) ([0-9]+)$", raw)
            if not m or any(c < " " for c in raw):
                bad.append("not a folded line: %r" % raw)
                continue
            out.append((m.group(1), int(m.group(2))))
    return out


def folded(path):
    for stack, w in sorted(
        (re.sub(r"^([^;]*)\([0-9]+\)", r"\1(PID)", s), w) for s, w in folded_lines(path)
    ):
        print("%s %d" % (stack, w))


def ns(us):
    a, b = us.split(".")
    return int(a) * 1000 + int(b)


def graph(path):
    tops, selfs = 0, 0
    with open(path) as f:
        rows = f.read().split("\n")
    for r in rows[2:]:
        m = re.match(r"^ +([0-9]+) +([0-9]+\.[0-9]{3}) +([0-9]+\.[0-9]{3})  ( +)(.*)$", r)
        if m:
            depth = len(m.group(4))
            if depth == 1:
                tops += ns(m.group(2))
            selfs += ns(m.group(3))
            print("%s %s%s" % (m.group(1), " " * depth, m.group(5)))
        elif re.match(r"^ {41}  \S", r):
            print("process " + re.sub(r"\([0-9]+\)$", "(PID)", r.strip()))
        elif r:
            bad.append("not a graph line: %r" % r)
    if tops != selfs:
        bad.append("self times add up to %d ns, the top paths' totals to %d" % (selfs, tops))


def report(path, outermost):
    total, selfs = None, 0
    with open(path) as f:
        rows = f.read().split("\n")
    print(re.sub(r"[0-9]+ calls", "N calls", rows[0]) if len(rows) else "")
    for r in rows[2:]:
        m = re.match(r"^ +([0-9]+)" + r" +([0-9]+\.[0-9]{3})" * 4 + r"  (.*)$", r)
        if m:
            t, s, avg, mx = (ns(m.group(i)) for i in range(2, 6))
            calls = int(m.group(1))
            if m.group(6) == outermost:
                total = t
            selfs += s
            if mx > t or s > t or avg * calls > t or (avg + 1) * calls <= t:
                bad.append("times do not agree: %r" % r)
            print("%s %s" % (m.group(1), m.group(6)))
        elif r:
            bad.append("not a report line: %r" % r)
    if total != selfs:
        bad.append("self times add up to %d ns, %s's total is %r" % (selfs, outermost, total))


if __name__ == "__main__":
    what, path = sys.argv[1], sys.argv[2]
    try:
        if what == "chrome":
            chrome(path)
        elif what == "chrome-count":
            chrome_count(path)
        elif what == "folded":
            folded(path)
        elif what == "sum-folded":
            print(sum(w for _, w in folded_lines(path)))
        elif what == "graph":
            graph(path)
        elif what == "report":
            report(path, sys.argv[3])
    except (ValueError, KeyError, TypeError, OSError) as e:
        bad.append("%s: %s" % (type(e).__name__, e))
    for b in bad:
        print("BAD: " + b)
    sys.exit(1 if bad else 0)
