#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""fluster with vkcu's decoders registered.

fluster (Debian's `fluster` package, or `pip install fluster-conformance`)
finds decoders only inside its own package, so this wrapper registers
vkcu's and then runs fluster's command line unchanged:

    tools/fluster/vkcu_fluster.py -tsd SUITES -r RESOURCES -o RESULTS \
        run -d vkcu-H.264-cpu -f junitxml -so results.xml

Decoders (`list` shows them): vkcu-H.264-cpu, vkcu-H.265-cpu (software
decode, the CPU reference) and vkcu-H.264-gpu, vkcu-H.265-gpu (Vulkan Video
decode; --require-gpu-decode makes any software fallback an error, as
fluster's FFmpeg-Vulkan decoder counts it). Each returns `vkcu hash --whole`,
the MD5 of all decoded frames' bytes in order, which is what fluster's own
decoders compute from their raw output file.

VKCU names the vkcu binary (default: `vkcu` on PATH, else build/vkcu of
this checkout). FLUSTER_PATH, if set, is a folder holding the `fluster`
Python package (for machines without the Debian package).
"""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
if os.environ.get("FLUSTER_PATH"):
    sys.path.insert(0, os.environ["FLUSTER_PATH"])
try:
    import fluster  # noqa: F401
except ImportError:
    # Debian's package, when python3 on PATH is another interpreter
    sys.path.append("/usr/lib/python3/dist-packages/")

from fluster.codec import Codec, OutputFormat  # noqa: E402
from fluster.decoder import Decoder, register_decoder  # noqa: E402


def vkcu_binary():
    if os.environ.get("VKCU"):
        return os.environ["VKCU"]
    from shutil import which
    return which("vkcu") or os.path.join(here, "..", "..", "build", "vkcu")


class VkcuDecoder(Decoder):
    """vkcu decode; the checksum is `vkcu hash --whole`"""
    backend = "cpu"

    def __init__(self):
        super().__init__()
        self.name = f"vkcu-{self.codec.value}-{self.backend}"
        self.description = f"vkcu {self.codec.value} " + (
            "Vulkan Video decoder (no software fallback)" if self.backend == "gpu" else "software decoder (CPU reference)")

    def decode(self, input_filepath, output_filepath, output_format, timeout, verbose, keep_files):
        cmd = [vkcu_binary(), "hash", "--whole", "--backend", self.backend, "-q"]
        if self.backend == "gpu":
            cmd.append("--require-gpu-decode")
        cmd += ["--", input_filepath]
        if verbose:
            print(" ".join(cmd))
        # a failing decode raises, which fluster records as an error
        out = subprocess.run(cmd, check=True, timeout=timeout, stdout=subprocess.PIPE,
                             stderr=None if verbose else subprocess.PIPE).stdout.decode()
        line = out.strip().splitlines()[-1] if out.strip() else ""
        if not line.startswith("MD5="):
            raise RuntimeError(f"vkcu printed no checksum: {out!r}")
        if keep_files:
            with open(output_filepath, "w") as f:
                f.write(line + "\n")
        return line[4:].lower()

    def check(self, verbose):
        try:
            return subprocess.run([vkcu_binary(), "--version"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL).returncode == 0
        except OSError:
            return False


@register_decoder
class VkcuH264Cpu(VkcuDecoder):
    codec = Codec.H264


@register_decoder
class VkcuH265Cpu(VkcuDecoder):
    codec = Codec.H265


@register_decoder
class VkcuH264Gpu(VkcuDecoder):
    codec = Codec.H264
    backend = "gpu"


@register_decoder
class VkcuH265Gpu(VkcuDecoder):
    codec = Codec.H265
    backend = "gpu"


if __name__ == "__main__":
    from fluster.main import fluster_main
    fluster_main()
