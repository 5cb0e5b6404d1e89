#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Generates the test clips vkcu's tests and benchmarks use, with the FFmpeg
# that tools/deps.sh built. Idempotent: existing clips are kept, unless this
# script or the FFmpeg build changed since they were made (then all are made
# again). Every encoder runs with one thread (x264/x265 frame threads, no x265
# thread pool, one SVT-AV1 processor): with automatic threads the encoders'
# bytes depend on the core count, and the golden hashes with them.
# media/gen.sha256 lists every clip's SHA-256; tests/cli/media.sh checks it.
#   tools/make-media.sh          small clips for the tests (media/gen/)
#   tools/make-media.sh --large  also 1080p/4K clips for GPU tests and benchmarks
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(sed -n 's/^FFMPEG_BIN := //p' "$root/build/deps.mk")
ff="$bin/ffmpeg -cpuflags 0 -hide_banner -loglevel error -nostdin -y"
out=$root/media/gen
mkdir -p "$out"
recipe="$(sha256sum "$0" | cut -c1-16) $("$bin/ffmpeg" -hide_banner -version | head -1)"
if [ "$(cat "$out/.recipe" 2>/dev/null)" != "$recipe" ]; then
  [ -e "$out/.recipe" ] && echo "media: tools/make-media.sh or FFmpeg changed: making every clip again" >&2
  find "$out" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
  printf '%s\n' "$recipe" > "$out/.recipe"
fi
# What makes the clips byte-identical on any machine: one encoder thread, no
# random Matroska UIDs or dates (bitexact muxing), FFmpeg's own code without
# SIMD (-cpuflags 0 above: the AAC encoder and swscale round differently per
# instruction set) and x264's cpu-independent mode (its mbtree SIMD gave other
# bytes on the H200's host).
fixed=(-threads 1 -svtav1-params lp=1 -x264-params cpu-independent=1 -fflags +bitexact)

make_clip() { # name, then ffmpeg arguments; written to a temp name first
  local name=$1; shift
  [ -s "$out/$name" ] && return 0
  echo "media: $name" >&2
  local ext=${name##*.}
  $ff "$@" "${fixed[@]}" "$out/.tmp.$ext" && mv "$out/.tmp.$ext" "$out/$name"
}

src="testsrc2=size=320x240:rate=25"
bt709="setparams=color_primaries=bt709:color_trc=bt709:colorspace=bt709:range=tv"
tags=(-color_primaries bt709 -color_trc bt709 -colorspace bt709 -color_range tv)

# The codec/container corpus of tests/cli/corpus.sh (media/gen/corpus).
bash "$root/tools/make-corpus.sh"

# H.264 + AAC in MP4, with container metadata and a chapter: the transcode tests.
make_clip h264-aac.mp4 -filter_complex "$src:duration=2,$bt709[v];sine=frequency=440:sample_rate=48000:duration=2[a]" \
  -map "[v]" -map "[a]" -c:v libx264 -preset veryfast -g 12 -bf 2 "${tags[@]}" -pix_fmt yuv420p -c:a aac -b:a 96k \
  -metadata title="vkcu test clip" -metadata:s:a:0 language=eng -shortest
# HEVC Main10 in Matroska.
make_clip hevc10.mkv -filter_complex "$src:duration=1.2,$bt709" -c:v libx265 -preset ultrafast -x265-params log-level=error:pools=none:frame-threads=1 \
  -pix_fmt yuv420p10le "${tags[@]}"
# AV1 (no Vulkan AV1 decode on an H200: the software-decode fallback).
make_clip av1.ivf -filter_complex "$src:duration=1" -c:v libsvtav1 -preset 12 -pix_fmt yuv420p
# H.264 4:2:2 (High 4:2:2 profile: no Vulkan decode on NVIDIA).
make_clip h264-422.mkv -filter_complex "$src:duration=1" -c:v libx264 -preset veryfast -pix_fmt yuv422p
# Variable frame rate: timestamps must come out unchanged.
make_clip vfr.mkv -filter_complex "$src:duration=2,setpts='(N*40+floor(N/5)*17)/1000/TB'" -fps_mode passthrough \
  -c:v libx264 -preset veryfast -enc_time_base 1/1000
# HDR10 (PQ, BT.2020) with mastering metadata, 10-bit HEVC.
make_clip hdr10.mkv -filter_complex "$src:duration=0.4,setparams=color_primaries=bt2020:color_trc=smpte2084:colorspace=bt2020nc" -c:v libx265 -preset ultrafast -pix_fmt yuv420p10le \
  -color_primaries bt2020 -color_trc smpte2084 -colorspace bt2020nc \
  -x265-params "log-level=error:pools=none:frame-threads=1:hdr10=1:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400"
# Audio only, and a file that is not media at all.
make_clip audio-only.mkv -filter_complex "sine=frequency=440:duration=1" -c:a aac
[ -s "$out/not-video.mp4" ] || printf 'this is a text file, not a video\n' > "$out/not-video.mp4"
: > "$out/empty.mp4"
# Truncated MP4 (moov at the end is cut off) and corrupt H.264 (bytes overwritten).
[ -s "$out/truncated.mp4" ] || head -c 20000 "$out/h264-aac.mp4" > "$out/truncated.mp4"
if [ ! -s "$out/corrupt.h264" ]; then
  $ff -i "$out/h264-aac.mp4" -an -c:v copy -bsf:v h264_mp4toannexb "$out/.tmp.h264"
  python3 - "$out/.tmp.h264" <<'EOF'
import sys, random
data = bytearray(open(sys.argv[1], 'rb').read())
rnd = random.Random(7)
for start in (len(data) // 3, len(data) // 2):
    for i in range(start, start + 600):
        data[i] = rnd.randrange(256)
open(sys.argv[1], 'wb').write(data)
EOF
  mv "$out/.tmp.h264" "$out/corrupt.h264"
fi

if [ "${1:-}" = --large ]; then
  big() { # name size frames codec-args...
    local name=$1 size=$2 frames=$3; shift 3
    make_clip "$name" -filter_complex "testsrc2=size=$size:rate=30,noise=alls=12:allf=t" -frames:v "$frames" "$@"
  }
  big h264-1080p.mp4 1920x1080 600 -c:v libx264 -preset veryfast -crf 26 -pix_fmt yuv420p
  big h264-2160p.mp4 3840x2160 600 -c:v libx264 -preset veryfast -crf 28 -pix_fmt yuv420p
  big hevc10-1080p.mp4 1920x1080 600 -c:v libx265 -preset ultrafast -crf 28 -pix_fmt yuv420p10le -x265-params log-level=error:pools=none:frame-threads=1
fi

# Transcode and trim tests (issue 5).
# Long GOPs (50 frames, no scene cuts) with 3 B-frames and AAC: frame-accurate trimming.
make_clip trim.mp4 -filter_complex "testsrc2=size=160x120:rate=25:duration=8,$bt709[v];sine=frequency=330:sample_rate=48000:duration=8[a]" \
  -map "[v]" -map "[a]" -c:v libx264 -preset veryfast -g 50 -keyint_min 50 -sc_threshold 0 -bf 3 "${tags[@]}" -pix_fmt yuv420p \
  -c:a aac -b:a 64k -shortest
# The same streams in Matroska (seeking by presentation time, Cues).
make_clip trim.mkv -i "$out/trim.mp4" -map 0 -c copy
# Rotation (display matrix) on the video stream, chapters and a title. (This
# FFmpeg build has no subtitle demuxers or encoders to make a subtitle stream.)
printf ';FFMETADATA1\ntitle=rotated clip\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=1000\ntitle=one\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=1000\nEND=2000\ntitle=two\n' > "$out/.chapters.txt"
make_clip rotated.mkv -display_rotation 90 -i "$out/h264-aac.mp4" -f ffmetadata -i "$out/.chapters.txt" \
  -map 0 -map_metadata 1 -map_chapters 1 -c copy
make_clip rotated.mp4 -display_rotation 90 -i "$out/h264-aac.mp4" -c copy
# A longer clip (750 frames) for the bounded encoder queue (memory stays flat).
make_clip long.mp4 -filter_complex "testsrc2=size=320x240:rate=25:duration=30" -c:v libx264 -preset ultrafast -pix_fmt yuv420p

# Cropped streams (issue 11): crop windows set in the SPS by FFmpeg's
# h264_metadata/hevc_metadata, in luma samples (multiples of the crop unit:
# 2 for 4:2:0, 1 across 4:4:4 and down 4:2:2). Left and top offsets that are
# odd in crop units: libavcodec on its own would keep the left offset aligned
# and hand back a wider picture. 208x176: above the H200's minimum HEVC decode
# size, so the GPU tests take the Vulkan path where the device can.
crop_clip() { # name pix_fmt encoder bsf=crops [encoder args]
  local name=$1 pix=$2 enc=$3 bsf=$4; shift 4
  make_clip "$name" -filter_complex "testsrc2=size=208x176:rate=25,$bt709" -frames:v 8 -c:v "$enc" \
    -pix_fmt "$pix" "${tags[@]}" -bsf:v "$bsf" "$@"
}
x265p=(-x265-params "log-level=error:pools=none:frame-threads=1")
crop_clip crop-h264.mkv yuv420p libx264 h264_metadata=crop_left=2:crop_right=4:crop_top=6:crop_bottom=2 -preset veryfast
crop_clip crop-h264-444.mkv yuv444p libx264 h264_metadata=crop_left=3:crop_right=1:crop_top=5:crop_bottom=2 -preset veryfast
crop_clip crop-h264-422.mkv yuv422p libx264 h264_metadata=crop_left=10:crop_right=2:crop_top=1:crop_bottom=4 -preset veryfast
crop_clip crop-hevc.mkv yuv420p libx265 hevc_metadata=crop_left=6:crop_right=2:crop_top=4:crop_bottom=10 -preset ultrafast "${x265p[@]}"
crop_clip crop-hevc10.mkv yuv420p10le libx265 hevc_metadata=crop_left=2:crop_right=0:crop_top=2:crop_bottom=0 -preset ultrafast "${x265p[@]}"
crop_clip crop-hevc-444.mkv yuv444p libx265 hevc_metadata=crop_left=1:crop_right=5:crop_top=3:crop_bottom=1 -preset ultrafast "${x265p[@]}"

# Container crop windows: MP4 copies of the cropped clips with a 'clap' box
# (clean aperture; FFmpeg's muxer cannot write one), applied after the
# codec's window. Offsets odd in luma samples: on 4:2:0 the ffmpeg CLI's crop
# filter rounds them (and the size) down to whole chroma samples.
clap_clip() { # name source top bottom left right
  local name=$1 from=$2; shift 2
  [ -s "$out/$name" ] && return 0
  echo "media: $name" >&2
  $ff -i "$out/$from" -map 0:v -c copy "${fixed[@]}" "$out/.tmp.mp4"
  python3 - "$out/.tmp.mp4" "$@" <<'PY'
import struct, sys
path = sys.argv[1]
t, b, l, r = map(int, sys.argv[2:6])
data = bytearray(open(path, 'rb').read())
def find(kind, pos, end):
    while pos < end:
        size, k = struct.unpack('>I4s', data[pos:pos + 8])
        if k == kind:
            return pos, size
        pos += size
    sys.exit('clap_clip: no %s box' % kind.decode())
# The box sizes from moov down to the sample entry grow; sample offsets stay
# valid only while moov follows the media data.
parents, pos, end = [], 0, len(data)
for kind in (b'moov', b'trak', b'mdia', b'minf', b'stbl', b'stsd'):
    start, size = find(kind, pos, end)
    parents.append(start)
    pos, end = start + 8, start + size
assert find(b'mdat', 0, len(data))[0] < parents[0], 'moov before mdat'
entry = pos + 8  # stsd: version/flags, entry count, then the sample entry
entry_size = struct.unpack('>I', data[entry:entry + 4])[0]
w, h = struct.unpack('>HH', data[entry + 32:entry + 36])
# Aperture size and centre offset that give exactly these crop offsets.
clap = struct.pack('>I4s8i', 40, b'clap', w - l - r, 1, h - t - b, 1, l - r, 2, t - b, 2)
data[entry + entry_size:entry + entry_size] = clap
for start in parents + [entry]:
    data[start:start + 4] = struct.pack('>I', struct.unpack('>I', data[start:start + 4])[0] + len(clap))
open(path, 'wb').write(data)
PY
  mv "$out/.tmp.mp4" "$out/$name"
}
clap_clip crop-clap-h264.mp4 crop-h264.mkv 2 1 5 0
clap_clip crop-clap-444.mp4 crop-h264-444.mkv 1 2 3 4
clap_clip crop-clap-hevc10.mp4 crop-hevc10.mkv 3 0 1 2
# The same windows as Matroska PixelCrop elements (FFmpeg's muxer writes the
# crop side data that the MP4 demuxer read from 'clap').
make_clip crop-pixelcrop-h264.mkv -i "$out/crop-clap-h264.mp4" -c copy
make_clip crop-pixelcrop-444.mkv -i "$out/crop-clap-444.mp4" -c copy

# Interlaced clips for the deinterlace tests (issue 17): fields 1/50 s apart
# (a 50 fps pattern woven two frames into one), so the fields really differ.
# MPEG-2 top field first with field DCT and motion (broadcast SD, 4:2:0);
# H.264 MBAFF bottom field first; ProRes 4:2:2 10-bit interlaced, bottom first.
woven() { # size field-order
  echo "testsrc2=size=$1:rate=50,tinterlace=mode=interleave_top,setfield=$2"
}
make_clip deint-mpeg2.ts -filter_complex "$(woven 352x288 tff)" -frames:v 20 -c:v mpeg2video \
  -flags +ildct+ilme -top 1 -g 12 -bf 2 -q:v 4
make_clip deint-h264-bff.mkv -filter_complex "$(woven 320x240 bff)" -frames:v 16 -c:v libx264 -preset veryfast \
  -pix_fmt yuv420p -flags +ildct -x264-params cpu-independent=1:bff=1 -g 12 -bf 2
make_clip deint-prores10.mov -filter_complex "$(woven 176x144 bff),format=yuv422p10le" -frames:v 8 -c:v prores_ks \
  -profile:v 3 -flags +ildct

# Real-world streams (issue 26): format changes mid-stream, colliding
# timestamps, damaged pictures. Segments are encoded apart and joined, as
# adaptive-bitrate captures and concatenated recordings are. 208x176 and up:
# above the H200's smallest H.264/HEVC decode size, so the GPU tests take the
# Vulkan path. Each segment starts with a key frame.
segment() { # name size frames pix_fmt encoder-args...
  local name=$1 size=$2 frames=$3 pix=$4; shift 4
  make_clip "$name" -filter_complex "testsrc2=size=$size:rate=25,$bt709" -frames:v "$frames" -pix_fmt "$pix" \
    "${tags[@]}" "$@"
}
seg264=(-c:v libx264 -preset veryfast -g 12 -bf 2)
seg265=(-c:v libx265 -preset ultrafast -x265-params log-level=error:pools=none:frame-threads=1 -g 12)
segvp9=(-c:v libvpx-vp9 -deadline good -cpu-used 5 -row-mt 0 -g 100 -crf 40 -b:v 0)
segment .seg-a.264 208x176 6 yuv420p "${seg264[@]}"
segment .seg-b.264 320x240 5 yuv420p "${seg264[@]}"
segment .seg-c.264 208x176 4 yuv420p "${seg264[@]}"
# H.264 Annex B whose SPS changes the size twice (208x176 -> 320x240 -> 208x176).
[ -s "$out/sizes.h264" ] || cat "$out/.seg-a.264" "$out/.seg-b.264" "$out/.seg-c.264" > "$out/sizes.h264"
# The same sizes in MP4: segments encoded with their parameter sets in band
# (x264's repeat-headers), joined by the concat demuxer.
for s in a:208x176:6 b:320x240:5 c:208x176:4; do
  IFS=: read -r n size frames <<< "$s"
  [ -s "$out/.seg-$n.mp4" ] || $ff -filter_complex "testsrc2=size=$size:rate=25,$bt709" -frames:v "$frames" \
    -pix_fmt yuv420p "${tags[@]}" "${seg264[@]}" -threads 1 -x264-params cpu-independent=1:repeat-headers=1 \
    -fflags +bitexact "$out/.seg-$n.mp4"
done
printf "file '%s'\n" .seg-a.mp4 .seg-b.mp4 .seg-c.mp4 > "$out/.seg-mp4.txt"
make_clip sizes.mp4 -f concat -safe 0 -i "$out/.seg-mp4.txt" -c copy
# HEVC Annex B: 8-bit 208x176 -> 8-bit 256x192 -> Main 10 256x192 -> 8-bit 208x176.
segment .seg-a.hevc 208x176 5 yuv420p "${seg265[@]}"
segment .seg-b.hevc 256x192 4 yuv420p "${seg265[@]}"
segment .seg-c.hevc 256x192 4 yuv420p10le "${seg265[@]}"
segment .seg-d.hevc 208x176 4 yuv420p "${seg265[@]}"
[ -s "$out/sizes.hevc" ] || cat "$out"/.seg-{a,b,c,d}.hevc > "$out/sizes.hevc"
# VP9 IVF files joined as they are: every segment's timestamps start at 0
# again, so they collapse (ffmpeg's framemd5 keeps 8 of 25 frames), and the
# size changes 160x120 -> 128x96 -> 160x120 -> 192x144 (software decode).
segment .seg-a.ivf 160x120 8 yuv420p "${segvp9[@]}"
segment .seg-b.ivf 128x96 6 yuv420p "${segvp9[@]}"
segment .seg-c.ivf 160x120 5 yuv420p "${segvp9[@]}"
segment .seg-d.ivf 192x144 6 yuv420p "${segvp9[@]}"
# VP9 8-bit -> profile 2 (10-bit) -> 8-bit at one size, timestamps continued.
segment .seg-e.ivf 160x120 5 yuv420p10le "${segvp9[@]}"
join_ivf() { # name continue-timestamps(0|1) segments...
  local name=$1 cont=$2; shift 2
  [ -s "$out/$name" ] && return 0
  echo "media: $name" >&2
  python3 - "$out/.tmp.ivf" "$cont" "$@" <<'PY'
import struct, sys
dst, cont, parts = sys.argv[1], sys.argv[2] == '1', sys.argv[3:]
head, body, frames, base = None, bytearray(), 0, 0
for p in parts:
    d = open(p, 'rb').read()
    if head is None:
        head = bytearray(d[:32])
    pos, last = 32, 0
    while pos + 12 <= len(d):
        size, pts = struct.unpack('<IQ', d[pos:pos + 12])
        body += struct.pack('<IQ', size, pts + base if cont else pts) + d[pos + 12:pos + 12 + size]
        pos += 12 + size
        frames += 1
        last = pts
    base += last + 1
head[24:28] = struct.pack('<I', frames)
open(dst, 'wb').write(head + body)
PY
  mv "$out/.tmp.ivf" "$out/$name"
}
join_ivf sizes.ivf 0 "$out"/.seg-{a,b,c,d}.ivf
join_ivf depth.ivf 1 "$out"/.seg-a.ivf "$out"/.seg-e.ivf "$out"/.seg-c.ivf
# Damaged H.264 with known error positions, two slices per picture: 32 bytes
# of noise written 30% into both slices of pictures 5 and 13 (decode order;
# FFmpeg's decoder detects both, conceals and flags them), and picture 7 (a
# P picture) lost whole (FFmpeg substitutes the previous reference, unflagged).
segment .damage-src.264 320x240 24 yuv420p -c:v libx264 -preset veryfast -g 12 -bf 0 -slices 2
damage() { # name source mode pictures
  local name=$1 from=$2 mode=$3 pics=$4
  [ -s "$out/$name" ] && return 0
  echo "media: $name" >&2
  python3 - "$out/$from" "$out/.tmp.264" "$mode" "$pics" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
mode, pics = sys.argv[3], [int(x) for x in sys.argv[4].split(',')]
starts, pos = [], 0
while (i := data.find(b'\x00\x00\x01', pos)) >= 0:
    starts.append((i - 1 if i and data[i - 1] == 0 else i, i + 3))
    pos = i + 3
ends = [s for s, _ in starts[1:]] + [len(data)]
pic, slices = -1, []
for (s, h), e in zip(starts, ends):
    if data[h] & 0x1f in (1, 5):
        if data[h + 1] & 0x80:  # first_mb_in_slice == 0: a new picture
            pic += 1
        if pic in pics:
            slices.append((s, h, e))
out, seed = bytearray(data), 2026
if mode == 'noise':
    for s, h, e in slices:
        at = h + (e - h) * 3 // 10
        for k in range(at, min(at + 32, e)):
            seed = (seed * 1103515245 + 12345) & 0x7fffffff
            out[k] = seed >> 16 & 0xff
else:
    for s, h, e in reversed(slices):
        del out[s:e]
open(sys.argv[2], 'wb').write(out)
PY
  mv "$out/.tmp.264" "$out/$name"
}
damage damaged-noise.h264 .damage-src.264 noise 5,13
damage damaged-lost.h264 .damage-src.264 lost 7
