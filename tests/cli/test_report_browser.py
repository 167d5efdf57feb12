#!/usr/bin/env python3
"""`report` in a real browser: Debian's chromium, headless. --dump-dom
(the page after the browser parsed it) names every model of the demo store
and the totals du prints; a screenshot of it is not blank (decoded here
with zlib: many colours, much of it not background). Skipped, with the
reason, where chromium is not installed (`make test-deps` installs it)."""

import os
import shutil
import struct
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from reportpage import du_numbers  # noqa: E402

t.check_binary()
# an empty fake machine: the logs of this one (its journal) are never read
ENV = {"OLLAMA_AUDIT_SYSROOT": t.tempdir("report-browser-sysroot")}


def chromium():
    for name in ("chromium", "chromium-browser"):
        p = shutil.which(name)
        if p:
            return p
    return None


def browse(page, *args):
    """Run headless chromium on a file; its stdout, or None after a failure."""
    profile = t.tempdir("chromium-profile")
    argv = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-dev-shm-usage", "--disable-extensions", "--user-data-dir=" + profile,
            "--window-size=1200,1600"] + list(args) + ["file://" + page]
    env = dict(os.environ, HOME=profile)
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=180, env=env)
    except subprocess.TimeoutExpired:
        t.fail("chromium did not finish within 180 s: %s" % " ".join(argv))
        return None
    if p.returncode != 0:
        t.fail("chromium exited %d" % p.returncode, p.stderr.decode(errors="replace")[-2000:])
        return None
    return p.stdout.decode("utf-8", "replace")


def png_pixels(data):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB or RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), "8-bit RGB(A) expected"
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


# No browser: a skip that ctest reports as one (SKIP_RETURN_CODE 77 in
# tests/CMakeLists.txt), never a pass.
if not chromium():
    print("SKIP: chromium is not installed (apt-get install chromium, or make test-deps): "
          "the report is not rendered in a browser here", flush=True)
    sys.exit(77)

with t.guard("the demo store's report in chromium"):
    s = t.copy_demo_store("report-browser")
    d = t.tempdir("report-browser-out")
    page = os.path.join(d, "report.html")
    r = t.audit(s.root, "report", "--output", page, env=ENV)
    t.exit_code(r, 0, "report --output")
    dom = browse(page, "--dump-dom")
    if dom is not None:
        t.contains(dom, "</svg>", "the browser built the treemap")
        models = t.audit(s.root, "list", "--format", "json", env=ENV).json()["stores"][0]["models"]
        for m in models:
            t.contains(dom, m["name"], "the rendered page names the model")
        for key, value in du_numbers(t.audit(s.root, "du", "--format", "json", env=ENV).json()).items():
            if key != "manifests":
                t.contains(dom, "%d bytes" % value, "the rendered page shows du's %s" % key)
    shot = os.path.join(d, "shot.png")
    if browse(page, "--screenshot=" + shot) is not None:
        t.ok(os.path.exists(shot), "a screenshot was written")
        w, h, bpp, rows = png_pixels(open(shot, "rb").read())
        t.eq((w, h), (1200, 1600), "the screenshot has the window's size")
        colours, inked = set(), 0
        for y in range(0, h, 4):
            for x in range(0, w, 4):
                px = rows[y][x * bpp:x * bpp + 3]
                colours.add(px)
                inked += px != b"\xff\xff\xff"
        samples = ((h + 3) // 4) * ((w + 3) // 4)
        print("screenshot: %d colours sampled, %.0f%% not white" % (len(colours), 100.0 * inked / samples))
        t.ok(len(colours) > 50, "many colours: text and a treemap (%d)" % len(colours))
        t.ok(inked > samples // 5, "a fifth or more of the page is not white (%d of %d)" % (inked, samples))

t.done()
