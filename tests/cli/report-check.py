#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks one of vkcu's HTML reports (tests/cli/report.sh).

usage: report-check.py PAGE CHECK [ARGS...]; prints "ok" or what is wrong
(one line) and exits 0 or 1.

Every CHECK first checks the page as a whole: strict UTF-8, an HTML5
doctype, elements closed in order (void elements aside), no script, no
stylesheet or font link, and every address (href, src, url(...)) either a
fragment naming an id of the page or a data:image/png URI: the page is
self-contained and loads nothing.

`report-check.py pixels ...` counts pixels of two screenshots instead (see pixels()).

CHECK is one of
  compare CSV NAME_A          compare --report: charts with one point per CSV row,
                              the worst frames = the lowest-PSNR rows of CSV,
                              thumbnails valid PNGs in the box, A's name shown
                              as its bytes (stray bytes and control characters as \\xHH)
  empty WHY                   no chart, and the page says why
  verify NAME_MANIFEST SPEC   verify --html: SPEC is "case:RESULT[:marks=N:changed=N:missing=N|:points=N]"
                              entries separated by spaces
"""
import base64, csv, html.parser, re, struct, sys, zlib

VOID = {'meta', 'img', 'br', 'hr', 'input', 'link', 'area', 'base', 'col', 'embed', 'source', 'track', 'wbr'}


class El:
    def __init__(self, tag, attrs):
        self.tag, self.a, self.kids = tag, attrs, []

    def text(self):
        return ''.join(k if isinstance(k, str) else k.text() for k in self.kids)

    def all(self):
        for k in self.kids:
            if isinstance(k, El):
                yield k
                yield from k.all()


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = El('#document', {})
        self.stack = [self.root]
        self.errors, self.ids, self.refs, self.elements = [], set(), [], []
        self.doctype = None

    def handle_decl(self, decl):
        self.doctype = decl

    def _start(self, tag, attrs, closed):
        a = dict(attrs)
        if 'id' in a:
            if a['id'] in self.ids:
                self.errors.append('duplicate id %s' % a['id'])
            self.ids.add(a['id'])
        for k in ('href', 'src', 'xlink:href', 'action', 'poster', 'srcset'):
            if k in a:
                self.refs.append(a[k] or '')
        for k in ('style', 'fill', 'stroke'):
            self.refs += re.findall(r'url\(([^)]*)\)', a.get(k) or '')
        if tag in ('script', 'link', 'iframe', 'object', 'embed', 'base'):
            self.errors.append('<%s> in a self-contained page' % tag)
        el = El(tag, a)
        self.elements.append(el)
        self.stack[-1].kids.append(el)
        if not closed and tag not in VOID:
            self.stack.append(el)

    def handle_starttag(self, tag, attrs):
        self._start(tag, attrs, False)

    def handle_startendtag(self, tag, attrs):
        self._start(tag, attrs, True)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if len(self.stack) < 2 or self.stack[-1].tag != tag:
            self.errors.append('</%s> closes <%s>' % (tag, self.stack[-1].tag))
            return
        self.stack.pop()

    def handle_data(self, data):
        self.stack[-1].kids.append(data)


def load(path):
    raw = open(path, 'rb').read()
    try:
        text = raw.decode('utf-8', errors='strict')
    except UnicodeDecodeError as e:
        return None, 'not UTF-8: %s' % e
    p = Page()
    p.feed(text)
    p.close()
    p.raw = text
    if not p.doctype or p.doctype.lower() != 'doctype html':
        return None, 'no <!DOCTYPE html> (%r)' % p.doctype
    if p.errors:
        return None, p.errors[0]
    if len(p.stack) > 1:
        return None, 'unclosed <%s>' % p.stack[-1].tag
    for r in p.refs:
        r = r.strip()
        if r.startswith('#'):
            if r[1:] not in p.ids:
                return None, 'link to a missing id %s' % r
        elif not r.startswith('data:image/png;base64,'):
            return None, 'an external address: %r' % r[:80]
    # outside data: URIs, nothing that names another site
    bare = re.sub(r'data:image/png;base64,[A-Za-z0-9+/=]*', '', text)
    for bad in ('http:', 'https:', '//', '@import', '<script'):
        if bad in bare:
            i = bare.index(bad)
            return None, 'found %r: %r' % (bad, bare[max(0, i - 40):i + 40])
    return p, None


def shown(name_bytes):
    """A name as the page must show it: its text, stray bytes and control characters as \\xHH."""
    out, i = [], 0
    while i < len(name_bytes):
        for n in (1, 2, 3, 4):
            try:
                ch = name_bytes[i:i + n].decode('utf-8')
            except UnicodeDecodeError:
                continue
            if len(ch) == 1 and not (ord(ch) < 0x20 or ord(ch) == 0x7f):
                out.append(ch)
                i += n
                break
        else:
            out.append('\\x%02X' % name_bytes[i])
            i += 1
    return ''.join(out)


def png_size(uri):
    data = base64.b64decode(uri.split(',', 1)[1], validate=True)
    if data[:8] != b'\x89PNG\r\n\x1a\n' or data[12:16] != b'IHDR':
        raise ValueError('not a PNG')
    w, h = struct.unpack('>II', data[16:24])
    # the image data must inflate: a truncated PNG would not
    pos, idat = 8, b''
    while pos < len(data):
        n, = struct.unpack('>I', data[pos:pos + 4])
        if data[pos + 4:pos + 8] == b'IDAT':
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    raw = zlib.decompress(idat)
    if len(raw) != h * (1 + 3 * w):
        raise ValueError('PNG data of %d bytes for %dx%d RGB' % (len(raw), w, h))
    return w, h


def element(p, ident):
    for e in p.elements:
        if e.a.get('id') == ident:
            return e
    return None


def check_plot(p, prefix, npoints, ncomps):
    psnr = element(p, prefix + '-psnr')
    ssim = element(p, prefix + '-ssim')
    if not psnr or not ssim:
        return 'no %s-psnr / %s-ssim chart' % (prefix, prefix)
    lines = [e.a for e in list(psnr.all()) + list(ssim.all()) if e.tag == 'polyline']
    if len(lines) != ncomps + 1:
        return '%d series in %s, expected %d' % (len(lines), prefix, ncomps + 1)
    for l in lines:
        pts = l['points'].split()
        if len(pts) != npoints:
            return 'series %s has %d points, expected %d' % (l.get('data-series'), len(pts), npoints)
        for q in pts:
            x, y = map(float, q.split(','))
            if not (0 <= x <= 900 and 0 <= y <= 240):
                return 'point %s outside the chart' % q
    return None


def pixels(args):
    """pixels WITH.rgb WITHOUT.rgb W H RRGGBB: screenshots (rgb24) of the page
    and of the same page without its polylines: prints the pixels that
    differ and the pixels of the series colour (within 10 per channel) in each."""
    a, b = open(args[0], 'rb').read(), open(args[1], 'rb').read()
    w, h, col = int(args[2]), int(args[3]), bytes.fromhex(args[4])
    if len(a) != w * h * 3 or len(b) != w * h * 3:
        print('screenshots of %d and %d bytes, expected %d' % (len(a), len(b), w * h * 3))
        return 1
    differ = sum(1 for i in range(0, len(a), 3) if a[i:i + 3] != b[i:i + 3])
    def near(buf):
        return sum(1 for i in range(0, len(buf), 3) if all(abs(buf[i + c] - col[c]) <= 10 for c in range(3)))
    print('%d %d %d' % (differ, near(a), near(b)))
    return 0


def main():
    if sys.argv[1] == 'pixels':
        return pixels(sys.argv[2:])
    page, check = sys.argv[1], sys.argv[2]
    p, err = load(page)
    if err:
        print(err)
        return 1
    if check == 'compare':
        rows = list(csv.DictReader(open(sys.argv[3])))
        name = shown(sys.argv[4].encode('utf-8', 'surrogateescape'))
        a = element(p, 'name-a')
        if not a or a.text() != name:
            return print('A shown as %r, expected %r' % (a and a.text(), name)) or 1
        t = re.search(r'<title>(.*?)</title>', p.raw, re.S).group(1)
        if html.unescape(t) != 'vkcu compare: ' + name:
            return print('title %r' % t) or 1
        err = check_plot(p, 'cmp', len(rows), 3)
        if err:
            return print(err) or 1
        differing = [r for r in rows if int(r['max_diff']) > 0]
        want = sorted(differing, key=lambda r: (float(r['psnr_avg']), int(r['frame_a'])))[:4]
        got = []
        for k in range(1, 5):
            el = element(p, 'cmp-worst-%d' % k)
            if not el:
                break
            m = re.match(r'frame (\d+) ', el.text().strip())
            got.append(int(m.group(1)))
            imgs = [e.a for e in el.all() if e.tag == 'img']
            if len(imgs) != 3:
                return print('worst frame %d has %d pictures' % (k, len(imgs))) or 1
            for im in imgs:
                w, h = png_size(im['src'])
                if w > 320 or h > 180 or w < 1:
                    return print('thumbnail %dx%d outside the 320x180 box' % (w, h)) or 1
        if got != [int(r['frame_a']) for r in want]:
            return print('worst frames %s, the CSV says %s' % (got, [int(r['frame_a']) for r in want])) or 1
        print('ok')
        return 0
    if check == 'empty':
        if any(e.tag == 'polyline' for e in p.elements):
            return print('a chart where none is possible') or 1
        if sys.argv[3] not in html.unescape(p.raw):
            return print('the page does not say %r' % sys.argv[3]) or 1
        print('ok')
        return 0
    if check == 'verify':
        manifest = shown(sys.argv[3].encode('utf-8', 'surrogateescape'))
        table = [e for e in p.elements if e.tag == 'table' and 'cases' in e.a.get('class', '')]
        if len(table) != 1:
            return print('no table of cases') or 1
        rows = [e for e in table[0].all() if e.tag == 'tr'][1:]
        spec = [s.split(':') for s in sys.argv[4].split()]
        if len(rows) != len(spec):
            return print('%d case rows, expected %d' % (len(rows), len(spec))) or 1
        sections = [e for e in p.elements if e.tag == 'section']
        if len(sections) != sum(1 for s in spec if s[1] == 'FAIL'):
            return print('%d case sections, expected one per failing case' % len(sections)) or 1
        for row, s in zip(rows, spec):
            cells = [e for e in row.all() if e.tag == 'td']
            texts = [c.text() for c in cells]
            if texts[0] != s[0] or texts[2] != s[1] or texts[1] != manifest:
                return print('row %s, expected %s, %s, %r' % (texts[:3], s[0], s[1], manifest)) or 1
            links = [e.a['href'] for e in cells[0].all() if e.tag == 'a']
            if (s[1] == 'FAIL') != bool(links):
                return print('case %s: links %s' % (s[0], links)) or 1
            if not links:
                continue
            sec = element(p, links[0][1:])
            if not sec or sec.tag != 'section':
                return print('case %s links to %s, not its section' % (s[0], links[0])) or 1
            opts = dict(o.split('=') for o in s[2:])
            if 'marks' in opts:
                rects = [e.a for e in sec.all() if e.tag == 'rect' and e.a.get('class', '').startswith('frame-')]
                kinds = [r['class'][6:] for r in rects]
                if (len(rects) != int(opts['marks']) or kinds.count('c') != int(opts['changed'])
                        or kinds.count('m') != int(opts['missing'])):
                    return print('case %s: %d frames (%d changed, %d missing), expected %s' % (
                        s[0], len(rects), kinds.count('c'), kinds.count('m'), opts)) or 1
            if 'points' in opts:
                err = check_plot(p, links[0][1:], int(opts['points']), 3)
                if err:
                    return print('case %s: %s' % (s[0], err)) or 1
        print('ok')
        return 0
    print('unknown check %s' % check)
    return 1


sys.exit(main())
