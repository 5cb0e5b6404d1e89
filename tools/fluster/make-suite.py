#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes fluster test suites for a folder of local H.264/HEVC streams.

    tools/fluster/make-suite.py FOLDER OUTDIR [--ffmpeg BIN] [--name PREFIX]

For each codec found (.264/.h264/.jsv → H.264, .h265/.hevc/.265/.bit → H.265)
writes OUTDIR/suites/PREFIX-h264.json (and -h265) and the resources fluster
reads them from, OUTDIR/resources/SUITE/VECTOR/FILE (symbolic links to the
streams; copies with --copy). Each vector's expected result is the MD5 of all decoded frames in
their native format, as fluster's FFmpeg decoders compute it from their raw
output file: `ffmpeg -i STREAM -f md5 -` of the build's FFmpeg (--ffmpeg,
else $FFMPEG_BIN/ffmpeg, else ffmpeg on PATH).

Then run, for example:
    tools/fluster/vkcu_fluster.py -tsd OUTDIR/suites -r OUTDIR/resources \\
        -o OUTDIR/results run -d vkcu-H.264-cpu -ts PREFIX-h264
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys

CODECS = {".264": "H.264", ".h264": "H.264", ".jsv": "H.264",
          ".h265": "H.265", ".hevc": "H.265", ".265": "H.265", ".bit": "H.265"}


def ffmpeg_result(ffmpeg, path):
    """(MD5 of the decoded frames, pixel format name)"""
    out = subprocess.run([ffmpeg, "-v", "error", "-nostdin", "-i", path, "-map", "0:v:0",
                          "-fps_mode", "passthrough", "-f", "md5", "-"],
                         check=True, stdout=subprocess.PIPE).stdout.decode().strip()
    if not out.startswith("MD5="):
        raise RuntimeError(f"{path}: ffmpeg printed {out!r}")
    probe = os.path.join(os.path.dirname(ffmpeg), "ffprobe")
    fmt = subprocess.run([probe if os.path.exists(probe) else "ffprobe", "-v", "error", "-select_streams", "v:0",
                          "-show_entries", "stream=pix_fmt", "-of", "default=nw=1:nk=1", path],
                         check=True, stdout=subprocess.PIPE).stdout.decode().split()[0]
    # full-range yuvj* is the same bytes as yuv*; fluster knows only the latter
    return out[4:], fmt.replace("yuvj", "yuv")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder")
    ap.add_argument("outdir")
    ap.add_argument("--ffmpeg")
    ap.add_argument("--name", default="vkcu-local")
    ap.add_argument("--copy", action="store_true",
                    help="copy the streams into the resources (a folder that travels to another machine)")
    a = ap.parse_args()
    ffmpeg = a.ffmpeg or (os.path.join(os.environ["FFMPEG_BIN"], "ffmpeg") if os.environ.get("FFMPEG_BIN") else "ffmpeg")
    suites = {}
    for f in sorted(os.listdir(a.folder)):
        codec = CODECS.get(os.path.splitext(f)[1].lower())
        path = os.path.abspath(os.path.join(a.folder, f))
        if not codec or not os.path.isfile(path):
            continue
        suite = f"{a.name}-{codec.replace('.', '').lower()}"
        result, fmt = ffmpeg_result(ffmpeg, path)
        vector = os.path.splitext(f)[0].replace(".", "_")
        with open(path, "rb") as fh:
            checksum = hashlib.md5(fh.read()).hexdigest()
        res = os.path.join(a.outdir, "resources", suite, vector)
        os.makedirs(res, exist_ok=True)
        link = os.path.join(res, f)
        if os.path.lexists(link):
            os.unlink(link)
        if a.copy:
            shutil.copyfile(path, link)
        else:
            os.symlink(path, link)
        suites.setdefault(suite, {"codec": codec, "vectors": []})["vectors"].append({
            "name": vector, "source": "file://" + path, "source_checksum": checksum,
            "input_file": f, "output_format": fmt, "result": result})
    if not suites:
        sys.exit(f"make-suite: no .264/.h264/.h265 streams in {a.folder}")
    os.makedirs(os.path.join(a.outdir, "suites"), exist_ok=True)
    for name, s in suites.items():
        doc = {"name": name, "codec": s["codec"],
               "description": f"local streams of {os.path.abspath(a.folder)}, results from {ffmpeg}",
               "test_vectors": s["vectors"]}
        with open(os.path.join(a.outdir, "suites", name + ".json"), "w") as fh:
            json.dump(doc, fh, indent=4)
            fh.write("\n")
        print(f"{name}: {len(s['vectors'])} vectors")


if __name__ == "__main__":
    main()
