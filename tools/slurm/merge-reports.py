#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Joins the reports of a sharded `vkcu batch` (one JSON-lines file per
Slurm array task or Kubernetes index) into one report and prints the totals.

    tools/slurm/merge-reports.py [-o MERGED.jsonl] REPORT_DIR | SHARD.jsonl ...

The merged report holds every file line, sorted by file, then one summary
line (same fields as a batch summary, plus "shards"). Checks that every
shard i/N of the run reported, that no file appears twice, and that each
shard's summary agrees with its file lines.

Exit status: 0 when every file is done or skipped; 1 when some failed or
were interrupted (or a shard never started); 2 when the reports are
inconsistent (missing shard, a file in two shards, unreadable lines).
"""
import argparse
import glob
import json
import os
import sys


def load(path, problems):
    files, summaries = [], []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as e:
                problems.append(f"{path}:{n}: not JSON ({e})")
                continue
            (summaries if obj.get("summary") else files).append(obj)
    return files, summaries


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("reports", nargs="+", help="report files, or folders of *.jsonl reports")
    ap.add_argument("-o", "--output", help="merged report (default: standard output)")
    a = ap.parse_args()

    paths = []
    for r in a.reports:
        if os.path.isdir(r):
            paths += sorted(glob.glob(os.path.join(r, "*.jsonl")))
        else:
            paths.append(r)
    if a.output:
        out_real = os.path.realpath(a.output)
        paths = [p for p in paths if os.path.realpath(p) != out_real]
    if not paths:
        print("merge-reports: no reports found", file=sys.stderr)
        return 2

    problems, failed_shards = [], []
    all_files, seen, shards = [], {}, {}
    for p in paths:
        try:
            files, summaries = load(p, problems)
        except OSError as e:
            problems.append(f"{p}: {e.strerror}")
            continue
        if not summaries:
            # A task killed before its end (time limit, node failure) has no summary.
            failed_shards.append(f"{p}: no summary line (the task did not finish: re-submit to resume)")
        for s in summaries:
            shard = s.get("shard", "0/1")
            if shard in shards:
                problems.append(f"{p}: shard {shard} also reported in {shards[shard]}")
            shards[shard] = p
            if s.get("files") != s.get("done", 0) + s.get("skipped", 0) + s.get("failed", 0) + \
                    s.get("interrupted", 0) + s.get("not_started", 0):
                problems.append(f"{p}: summary counts do not add up to {s.get('files')} files")
            if len(files) != s.get("files", 0) - s.get("not_started", 0):
                problems.append(f"{p}: {len(files)} file lines, summary says {s.get('files')} "
                                f"({s.get('not_started', 0)} not started)")
            if s.get("not_started"):
                failed_shards.append(f"{p}: {s['not_started']} files not started (interrupted)")
        for f in files:
            name = f.get("file")
            if name in seen:
                problems.append(f"{name}: in {seen[name]} and {p}")
            seen[name] = p
            all_files.append(f)

    counts = set(int(s.split("/")[1]) for s in shards)
    if len(counts) > 1:
        problems.append(f"reports of different shard counts: {sorted(counts)}")
    elif counts:
        n = counts.pop()
        missing = [f"{i}/{n}" for i in range(n) if f"{i}/{n}" not in shards]
        if missing:
            problems.append(f"missing shards: {' '.join(missing)} (their tasks did not run or did not finish)")

    all_files.sort(key=lambda f: f.get("file", ""))
    status = {}
    for f in all_files:
        status[f.get("status")] = status.get(f.get("status"), 0) + 1
    frames = sum(f.get("frames", 0) for f in all_files)
    seconds = max((0,) + tuple(f.get("seconds", 0) for f in all_files))
    summary = {
        "summary": True, "shards": len(shards), "files": len(all_files),
        "done": status.get("done", 0), "skipped": status.get("skipped", 0),
        "failed": status.get("failed", 0), "interrupted": status.get("interrupted", 0),
        "frames": frames, "longest_file_seconds": round(seconds, 3),
    }
    out = open(a.output, "w", encoding="utf-8") if a.output else sys.stdout
    for f in all_files:
        out.write(json.dumps(f, ensure_ascii=False) + "\n")
    out.write(json.dumps(summary) + "\n")
    if a.output:
        out.close()

    for p in problems + failed_shards:
        print(f"merge-reports: {p}", file=sys.stderr)
    print(f"merged {len(shards)} shards: {summary['files']} files, {summary['done']} done, "
          f"{summary['skipped']} skipped, {summary['failed']} failed, {summary['interrupted']} interrupted, "
          f"{frames} frames", file=sys.stderr)
    for f in all_files:
        if f.get("status") in ("failed", "interrupted"):
            print(f"  {f.get('status')}: {f.get('file')}: {f.get('error')}", file=sys.stderr)
    if problems:
        return 2
    if summary["failed"] or summary["interrupted"] or failed_shards:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
