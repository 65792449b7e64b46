#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Charts for bench/run.py and bench/scaling.py: matplotlib where it is
installed, else a small built-in PNG renderer (stdlib only: zlib + a 7x13
bitmap font), so that a machine without matplotlib still gets a picture.

    render(spec, path)          -> "matplotlib" or "builtin"
    python3 bench/chart.py SPEC.json OUT.png   (what run.py calls when another
                                                interpreter has matplotlib)

A spec is a dict:
  {"type": "bars", "title": str, "xlabel": str, "log": bool,
   "items": [{"label": str, "value": float, "lo": float|None, "hi": float|None,
              "group": str, "text": str}], "legend": {group: caption}}
  {"type": "lines", "title": str,
   "panels": [{"title": str, "xlabel": str, "ylabel": str, "logx": bool, "logy": bool,
               "xticks": [..], "series": [{"label": str, "x": [..], "y": [..]}]}]}
Set DMACONN_BENCH_BUILTIN_CHARTS=1 to force the built-in renderer.
"""

import json
import math
import os
import struct
import sys
import zlib

PALETTE = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
           (140, 86, 75), (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207)]


def _hex(rgb):
    return "#%02x%02x%02x" % rgb


def _groups(items):
    order = []
    for it in items:
        g = it.get("group", "")
        if g not in order:
            order.append(g)
    return {g: PALETTE[i % len(PALETTE)] for i, g in enumerate(order)}


def _tick_text(v):
    if v >= 1:
        return "%g" % v
    return ("%.6f" % v).rstrip("0") if v >= 1e-4 else "%g" % v


def _decades(lo, hi):
    a = math.floor(math.log10(lo))
    b = math.ceil(math.log10(hi))
    if a == b:
        b += 1
    return [10.0 ** k for k in range(a, b + 1)]


# ------------------------------------------------------------- matplotlib

def _mpl_bars(spec, path, plt):
    items = spec["items"]
    colors = _groups(items)
    fig, ax = plt.subplots(figsize=(10, 0.42 * len(items) + 2.0))
    ys = list(range(len(items)))[::-1]
    for y, it in zip(ys, items):
        c = _hex(colors[it.get("group", "")])
        ax.barh(y, it["value"], color=c, height=0.7)
        if it.get("lo") is not None and it.get("hi") is not None:
            ax.errorbar(it["value"], y, xerr=[[it["value"] - it["lo"]], [it["hi"] - it["value"]]],
                        fmt="none", ecolor="black", elinewidth=1, capsize=3)
        ax.text(max(it["value"], it.get("hi") or 0) * (1.15 if spec.get("log", True) else 1.02), y,
                it.get("text", "%g" % it["value"]), va="center", fontsize=8)
    ax.set_yticks(ys)
    ax.set_yticklabels([it["label"] for it in items], fontsize=9)
    if spec.get("log", True):
        ax.set_xscale("log")
        vals = [it["value"] for it in items if it["value"] > 0]
        his = [it.get("hi") or it["value"] for it in items]
        ax.set_xlim(min(vals) / 3, max(his) * 20)
    ax.set_xlabel(spec.get("xlabel", ""))
    ax.set_title(spec.get("title", ""), fontsize=11)
    ax.grid(axis="x", which="major", alpha=0.3)
    legend = spec.get("legend") or {}
    if legend:
        from matplotlib.patches import Patch
        ax.legend(handles=[Patch(color=_hex(colors[g]), label=t) for g, t in legend.items() if g in colors],
                  loc="upper center", bbox_to_anchor=(0.5, -0.09 - 0.9 / (len(items) + 4)), ncol=len(legend),
                  fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def _mpl_lines(spec, path, plt):
    panels = spec["panels"]
    fig, axes = plt.subplots(1, len(panels), figsize=(6.2 * len(panels), 4.8), squeeze=False)
    for ax, p in zip(axes[0], panels):
        for i, s in enumerate(p["series"]):
            ax.plot(s["x"], s["y"], marker="o", ms=4, color=_hex(PALETTE[i % len(PALETTE)]), label=s["label"])
        if p.get("logx"):
            ax.set_xscale("log", base=2)
        if p.get("logy"):
            ax.set_yscale("log")
        if p.get("xticks"):
            ax.set_xticks(p["xticks"])
            ax.set_xticklabels([str(t) for t in p["xticks"]])
        ax.set_xlabel(p.get("xlabel", ""))
        ax.set_ylabel(p.get("ylabel", ""))
        ax.set_title(p.get("title", ""), fontsize=10)
        ax.grid(which="major", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    if spec.get("title"):
        fig.suptitle(spec["title"], fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def _matplotlib():
    if os.environ.get("DMACONN_BENCH_BUILTIN_CHARTS"):
        return None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except Exception:
        return None


def have_matplotlib():
    return _matplotlib() is not None


# ---------------------------------------------------------- built-in PNG

# DejaVu Sans Mono 12 px rendered without anti-aliasing (Bitstream Vera
# licence), ASCII 32..126, 13 rows of 7 bits per glyph, two hex digits a row.
_FONT_W, _FONT_H = 7, 13
_FONT = (
    "00000000000000000000000000000808080808080008080000000014141400000000000000000000000a123f14147e2428000000"
    "00081c2a28380e0a2a1c08080000304848320c36090906000000000e101018182527321d00000000080808000000000000000000"
    "060404080808080804040600001808080404040404080818000000082a1c1c2a080000000000000000000808087f080808000000"
    "000000000000000008081000000000000000001c0000000000000000000000000000080800000000010202040408081010200000"
    "001e122121252121121e0000000038080808080808083e000000001e210101020408103f000000001e2101010e0101211e000000"
    "0006060a1a12223f0202000000003e20203e030101231e000000000e11202e332121131e000000003f0302020404080810000000"
    "001e2121211e2121211e000000001e322121231d01221c0000000000000008080000080800000000000000080800000808100000"
    "000000010e30300e010000000000000000003f003f0000000000000000201c03031c2000000000000e1101060c08000808000000"
    "00000e13212729292730100e00000c0c0c1212121e2121000000003e2121213e2121213e000000000e112020202020110e000000"
    "003c222121212121223c000000003f2020203f2020203f000000003f2020203f20202020000000000e112020232121110e000000"
    "00212121213f21212121000000003e080808080808083e000000000e020202020202221c00000000212224283824262221000000"
    "0020202020202020203f000000002133332d2d2d21212100000000313129292d25252323000000001e122121212121121e000000"
    "003e2121213e20202020000000001e122121212121131e020200003e2121213e22212120000000001e2120301e0101211e000000"
    "007f08080808080808080000000021212121212121211e000000002121121212120c0c0c00000000414949555555362222000000"
    "002112120c0c0c12122100000000412214140808080808000000003f0302040c0810303f0000000c0808080808080808080c0000"
    "0020101008080404020201000018080808080808080808180000001824420000000000000000000000000000000000000000007f"
    "080400000000000000000000000000001c22021e22221e0000002020203c22222222223c0000000000001c32202020301e000000"
    "0202021e22222222221e0000000000001c32223e20221c0000000608083e0808080808080000000000001e22222222221e02120c"
    "2020202c3222222222220000000800003808080808083e0000000400001c04040404040404041820202022242830282422000000"
    "380808080808080808060000000000003e2a2a2a2a2a2a0000000000002c3222222222220000000000001c22222222221c000000"
    "0000003c22222222223c2020200000001e22222222221e0202020000001e1910101010100000000000001c22201c02221c000000"
    "0008083e08080808080e0000000000002222222222221e0000000000002222141414080800000000000041412a2a361414000000"
    "00000022141408141422000000000000222214141418080810300000003e02040810203e0000000e0808080830080808080e0000"
    "080808080808080808080808003808080808060808080838000000000000003807000000000000")


class Canvas:
    def __init__(self, w, h, bg=(255, 255, 255)):
        self.w, self.h = w, h
        self.px = bytearray(bytes(bg) * (w * h))

    def put(self, x, y, c):
        if 0 <= x < self.w and 0 <= y < self.h:
            o = (y * self.w + x) * 3
            self.px[o:o + 3] = bytes(c)

    def rect(self, x0, y0, x1, y1, c):
        x0, x1 = max(0, min(x0, x1)), min(self.w, max(x0, x1))
        y0, y1 = max(0, min(y0, y1)), min(self.h, max(y0, y1))
        row = bytes(c) * (x1 - x0)
        for y in range(y0, y1):
            o = (y * self.w + x0) * 3
            self.px[o:o + len(row)] = row

    def line(self, x0, y0, x1, y1, c, width=1):
        x0, y0, x1, y1 = int(round(x0)), int(round(y0)), int(round(x1)), int(round(y1))
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err = dx + dy
        r = width // 2
        while True:
            if width > 1:
                self.rect(x0 - r, y0 - r, x0 - r + width, y0 - r + width, c)
            else:
                self.put(x0, y0, c)
            if x0 == x1 and y0 == y1:
                break
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def dashed_hline(self, x0, x1, y, c):
        for x in range(int(x0), int(x1), 4):
            self.rect(x, y, min(x + 2, int(x1)), y + 1, c)

    def text(self, x, y, s, c=(0, 0, 0)):
        """Draws s with its top-left corner at (x, y); returns its width."""
        font = "".join(_FONT)
        for k, ch in enumerate(s):
            o = ord(ch) - 32
            if not 0 <= o < 95:
                o = ord("?") - 32
            g = font[o * 2 * _FONT_H:(o + 1) * 2 * _FONT_H]
            for r in range(_FONT_H):
                bits = int(g[2 * r:2 * r + 2], 16)
                for b in range(_FONT_W):
                    if bits >> (_FONT_W - 1 - b) & 1:
                        self.put(x + k * _FONT_W + b, y + r, c)
        return len(s) * _FONT_W

    def png(self, path):
        raw = b"".join(b"\x00" + bytes(self.px[y * self.w * 3:(y + 1) * self.w * 3]) for y in range(self.h))

        def chunk(kind, data):
            return (struct.pack(">I", len(data)) + kind + data +
                    struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
        with open(path, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n")
            f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0)))
            f.write(chunk(b"IDAT", zlib.compress(raw, 9)))
            f.write(chunk(b"IEND", b""))


def text_width(s):
    return len(s) * _FONT_W


GRID = (225, 225, 225)
AXIS = (60, 60, 60)


def _builtin_bars(spec, path):
    items = spec["items"]
    colors = _groups(items)
    row, plot_w = 24, 560
    left = 16 + max(text_width(it["label"]) for it in items)
    top = 40
    legend = [(g, t) for g, t in (spec.get("legend") or {}).items() if g in colors]
    bottom = 50 + 18 * len(legend)
    right = 20 + max(text_width(it.get("text", "")) for it in items)
    cv = Canvas(left + plot_w + right, top + row * len(items) + bottom)
    cv.text(10, 12, spec.get("title", ""))
    vals = [it["value"] for it in items if it["value"] > 0] or [1.0]
    his = [it.get("hi") or it["value"] for it in items] or [1.0]
    log = spec.get("log", True)
    if log:
        ticks = _decades(min(vals) / 2, max(his) * 2)
        lo, hi = math.log10(ticks[0]), math.log10(ticks[-1])

        def X(v):
            return left + (math.log10(max(v, ticks[0])) - lo) / (hi - lo) * plot_w
    else:
        top_v = max(his) * 1.1
        ticks = [top_v * k / 5 for k in range(6)]

        def X(v):
            return left + v / top_v * plot_w
    y_end = top + row * len(items)
    for t in ticks:
        x = int(X(t))
        cv.rect(x, top, x + 1, y_end, GRID)
        s = _tick_text(t)
        cv.text(x - text_width(s) // 2, y_end + 6, s, AXIS)
    cv.rect(left, top, left + 1, y_end, AXIS)
    cv.rect(left, y_end, left + plot_w, y_end + 1, AXIS)
    xl = spec.get("xlabel", "")
    cv.text(left + (plot_w - text_width(xl)) // 2, y_end + 24, xl, AXIS)
    for i, it in enumerate(items):
        y = top + i * row
        cv.text(left - 8 - text_width(it["label"]), y + 5, it["label"])
        x1 = int(X(it["value"])) if it["value"] > 0 else left
        cv.rect(left + 1, y + 4, max(x1, left + 2), y + row - 4, colors[it.get("group", "")])
        xe = x1
        if it.get("lo") is not None and it.get("hi") is not None:
            a, b = int(X(it["lo"])), int(X(it["hi"]))
            cy = y + row // 2
            cv.rect(a, cy, b + 1, cy + 1, (0, 0, 0))
            cv.rect(a, cy - 4, a + 1, cy + 5, (0, 0, 0))
            cv.rect(b, cy - 4, b + 1, cy + 5, (0, 0, 0))
            xe = max(xe, b)
        cv.text(xe + 6, y + 5, it.get("text", "%g" % it["value"]), AXIS)
    ly = y_end + 44
    for g, t in legend:
        cv.rect(left, ly + 2, left + 12, ly + 12, colors[g])
        cv.text(left + 18, ly, t)
        ly += 18
    cv.png(path)


def _builtin_lines(spec, path):
    panels = spec["panels"]
    pw, ph, ml, mt, mb, gap = 420, 300, 70, 74, 60, 30
    nser = max(len(p["series"]) for p in panels)
    W = len(panels) * (ml + pw + gap) + 10
    H = mt + ph + mb + 16 * nser + 10
    cv = Canvas(W, H)
    cv.text(10, 10, spec.get("title", ""))
    for k, p in enumerate(panels):
        ox = k * (ml + pw + gap) + ml
        xs = [x for s in p["series"] for x in s["x"]]
        ys = [y for s in p["series"] for y in s["y"] if y is not None and y > 0] or [1.0]
        cv.text(ox, mt - 38, p.get("title", ""))
        if p.get("logx"):
            xlo, xhi = math.log2(min(xs)), math.log2(max(xs))
            fx = math.log2
        else:
            xlo, xhi, fx = min(xs), max(xs), float
        if xhi == xlo:
            xhi = xlo + 1
        if p.get("logy", True):
            yt = _decades(min(ys) / 1.5, max(ys) * 1.5)
            ylo, yhi, fy = math.log10(yt[0]), math.log10(yt[-1]), math.log10
        else:
            yt = [max(ys) * 1.1 * i / 5 for i in range(6)]
            ylo, yhi, fy = 0.0, max(ys) * 1.1, float

        def X(v):
            return ox + 8 + (fx(v) - xlo) / (xhi - xlo) * (pw - 16)

        def Y(v):
            return mt + ph - (fy(max(v, 10 ** ylo if p.get("logy", True) else 0)) - ylo) / (yhi - ylo) * ph
        for t in yt:
            y = int(Y(t))
            cv.rect(ox, y, ox + pw, y + 1, GRID)
            s = _tick_text(t)
            cv.text(ox - 6 - text_width(s), y - 6, s, AXIS)
        for t in p.get("xticks") or sorted(set(xs)):
            x = int(X(t))
            cv.rect(x, mt, x + 1, mt + ph, GRID)
            cv.text(x - text_width(str(t)) // 2, mt + ph + 6, str(t), AXIS)
        cv.rect(ox, mt, ox + 1, mt + ph, AXIS)
        cv.rect(ox, mt + ph, ox + pw, mt + ph + 1, AXIS)
        xl, yl = p.get("xlabel", ""), p.get("ylabel", "")
        cv.text(ox + (pw - text_width(xl)) // 2, mt + ph + 24, xl, AXIS)
        cv.text(ox - ml + 4, mt - 18, yl, AXIS)
        for i, s in enumerate(p["series"]):
            c = PALETTE[i % len(PALETTE)]
            pts = [(X(x), Y(y)) for x, y in zip(s["x"], s["y"]) if y is not None and y > 0]
            for (a, b), (c2, d) in zip(pts, pts[1:]):
                cv.line(a, b, c2, d, c, 2)
            for a, b in pts:
                cv.rect(int(a) - 3, int(b) - 3, int(a) + 4, int(b) + 4, c)
            ly = mt + ph + 44 + 16 * i
            cv.rect(ox, ly + 3, ox + 14, ly + 9, c)
            cv.text(ox + 20, ly, s["label"])
    cv.png(path)


def render(spec, path):
    """Draws spec into path (PNG); returns which renderer drew it."""
    plt = _matplotlib()
    if plt is not None:
        (_mpl_bars if spec["type"] == "bars" else _mpl_lines)(spec, path, plt)
        return "matplotlib"
    (_builtin_bars if spec["type"] == "bars" else _builtin_lines)(spec, path)
    return "builtin"


def main(argv):
    if len(argv) != 3:
        print("usage: chart.py SPEC.json OUT.png", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        spec = json.load(f)
    print(render(spec, argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
