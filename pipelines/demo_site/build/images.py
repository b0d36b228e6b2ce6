"""Draw the demo site's images with Pillow (small, nameable content) and make the bad ones.

Each image gets a label: what a person would say it shows ("a red circle on a white
background"). Captions and matching alt texts use that label; mismatched alts are chosen in
media.py and marked there.
"""
from __future__ import annotations

import io
import math
import random
from pathlib import Path

from PIL import Image, ImageDraw

WHITE, BLACK = (255, 255, 255), (0, 0, 0)


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def _jpeg(img: Image.Image, quality: int = 70) -> bytes:
    buf = io.BytesIO()
    img.convert("RGB").save(buf, format="JPEG", quality=quality, optimize=True)
    return buf.getvalue()


def _canvas(bg=WHITE, size=(160, 160)):
    img = Image.new("RGB", size, bg)
    return img, ImageDraw.Draw(img)


def red_circle():
    img, d = _canvas()
    d.ellipse((30, 30, 130, 130), fill=(220, 20, 30))
    return img


def blue_square():
    img, d = _canvas()
    d.rectangle((35, 35, 125, 125), fill=(20, 60, 210))
    return img


def green_triangle():
    img, d = _canvas()
    d.polygon([(80, 25), (140, 135), (20, 135)], fill=(30, 160, 50))
    return img


def yellow_star():
    img, d = _canvas(bg=(15, 25, 80))
    pts = []
    for i in range(10):
        r = 65 if i % 2 == 0 else 27
        a = -math.pi / 2 + i * math.pi / 5
        pts.append((80 + r * math.cos(a), 82 + r * math.sin(a)))
    d.polygon(pts, fill=(250, 215, 30))
    return img


def purple_hexagon():
    img, d = _canvas(bg=(225, 225, 225))
    pts = [(80 + 60 * math.cos(math.pi / 3 * i), 80 + 60 * math.sin(math.pi / 3 * i)) for i in range(6)]
    d.polygon(pts, fill=(120, 40, 160))
    return img


def orange_stripes():
    img, d = _canvas(size=(200, 120))
    for i in range(0, 120, 24):
        d.rectangle((0, i, 200, i + 11), fill=(245, 140, 20))
    return img


def bar_chart():
    img, d = _canvas(size=(200, 150))
    d.line((20, 130, 190, 130), fill=BLACK, width=2)
    d.line((20, 10, 20, 130), fill=BLACK, width=2)
    for i, h in enumerate((30, 55, 80, 105)):
        x = 35 + i * 40
        d.rectangle((x, 130 - h, x + 25, 129), fill=(40, 90, 200))
    return img


def line_chart():
    img, d = _canvas(size=(200, 150))
    d.line((20, 130, 190, 130), fill=BLACK, width=2)
    d.line((20, 10, 20, 130), fill=BLACK, width=2)
    pts = [(25, 120), (60, 100), (95, 105), (130, 60), (165, 40), (185, 20)]
    d.line(pts, fill=(210, 30, 30), width=4)
    return img


def pie_chart():
    img, d = _canvas()
    d.pieslice((20, 20, 140, 140), 0, 180, fill=(210, 30, 30))
    d.pieslice((20, 20, 140, 140), 180, 300, fill=(30, 160, 50))
    d.pieslice((20, 20, 140, 140), 300, 360, fill=(30, 60, 210))
    return img


def apple():
    img, d = _canvas(bg=(250, 248, 240))
    d.ellipse((35, 45, 125, 135), fill=(200, 25, 25))
    d.line((80, 50, 86, 25), fill=(90, 60, 20), width=5)
    d.ellipse((88, 22, 118, 40), fill=(40, 150, 40))
    return img


def sunset():
    img = Image.new("RGB", (200, 120))
    d = ImageDraw.Draw(img)
    for y in range(70):
        d.line((0, y, 200, y), fill=(250, 120 + y, 60 + y))
    d.ellipse((75, 40, 125, 90), fill=(255, 150, 20))
    d.rectangle((0, 70, 200, 120), fill=(20, 35, 70))
    return img


# path -> (draw function, format, label)
GOOD = {
    "/img/shapes/red-circle.png": (red_circle, "PNG", "a red circle on a white background"),
    "/img/shapes/blue-square.png": (blue_square, "PNG", "a blue square on a white background"),
    "/img/shapes/green-triangle.png": (green_triangle, "PNG", "a green triangle on a white background"),
    "/img/shapes/yellow-star.png": (yellow_star, "PNG", "a yellow star on a dark blue background"),
    "/img/shapes/purple-hexagon.jpg": (purple_hexagon, "JPEG", "a purple hexagon on a light grey background"),
    "/img/shapes/orange-stripes.jpg": (orange_stripes, "JPEG", "orange and white horizontal stripes"),
    "/img/charts/bar-chart.png": (bar_chart, "PNG", "a bar chart with four blue bars of increasing height"),
    "/img/charts/line-chart.png": (line_chart, "PNG", "a line chart with a red line rising from left to right"),
    "/img/charts/pie-chart.png": (pie_chart, "PNG", "a pie chart with red, green and blue slices"),
    "/img/photos/apple.jpg": (apple, "JPEG", "a red apple with a green leaf"),
    "/img/photos/sunset.jpg": (sunset, "JPEG", "an orange sun setting over a dark blue sea"),
}

# the numbers the charts were drawn from (the gallery text states them too)
CHART_DATA = {
    "/img/charts/bar-chart.png": {"type": "bar", "values": [12, 22, 32, 42],
                                  "labels": ["day 1", "day 2", "day 3", "day 4"]},
    "/img/charts/line-chart.png": {"type": "line", "trend": "rising", "points": 6},
    "/img/charts/pie-chart.png": {"type": "pie", "shares": {"red": 0.5, "green": 0.3333, "blue": 0.1667}},
}

SVGS = {
    "/img/svg/house.svg": ("a simple house with a red roof and a brown door", """<svg xmlns="http://www.w3.org/2000/svg" width="160" height="160" viewBox="0 0 160 160">
<rect width="160" height="160" fill="#ffffff"/>
<rect x="40" y="75" width="80" height="65" fill="#e8d9b0" stroke="#333" stroke-width="2"/>
<polygon points="30,78 80,30 130,78" fill="#c8281e"/>
<rect x="70" y="105" width="22" height="35" fill="#7a4a1c"/>
</svg>
"""),
    "/img/svg/sun.svg": ("a yellow sun with short rays on a light blue sky", """<svg xmlns="http://www.w3.org/2000/svg" width="160" height="160" viewBox="0 0 160 160">
<rect width="160" height="160" fill="#bfe3ff"/>
<g stroke="#f2b705" stroke-width="6">
<line x1="80" y1="10" x2="80" y2="35"/><line x1="80" y1="125" x2="80" y2="150"/>
<line x1="10" y1="80" x2="35" y2="80"/><line x1="125" y1="80" x2="150" y2="80"/>
<line x1="30" y1="30" x2="48" y2="48"/><line x1="112" y1="112" x2="130" y2="130"/>
<line x1="130" y1="30" x2="112" y2="48"/><line x1="30" y1="130" x2="48" y2="112"/>
</g>
<circle cx="80" cy="80" r="32" fill="#ffd21f"/>
</svg>
"""),
    "/img/svg/traffic-light.svg": ("a traffic light showing red, amber and green lamps", """<svg xmlns="http://www.w3.org/2000/svg" width="80" height="180" viewBox="0 0 80 180">
<rect x="10" y="5" width="60" height="170" rx="10" fill="#222"/>
<circle cx="40" cy="40" r="20" fill="#e02020"/>
<circle cx="40" cy="90" r="20" fill="#f0a020"/>
<circle cx="40" cy="140" r="20" fill="#20b040"/>
</svg>
"""),
}


def build_images(site: Path) -> dict[str, dict]:
    """Write every static image under `site`; return path -> ground-truth entry."""
    out: dict[str, dict] = {}

    def put(path: str, data: bytes) -> None:
        f = site / path.lstrip("/")
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(data)

    for path, (fn, fmt, label) in GOOD.items():
        img = fn()
        data = _png(img) if fmt == "PNG" else _jpeg(img)
        put(path, data)
        out[path] = {"format": fmt.lower(), "width": img.width, "height": img.height, "frames": 1,
                     "label": label, "bad": None, "bytes": len(data)}
        if path in CHART_DATA:
            out[path]["chart"] = CHART_DATA[path]
    for path, (label, svg) in SVGS.items():
        put(path, svg.encode())
        w = int(svg.split('width="')[1].split('"')[0])
        h = int(svg.split('height="')[1].split('"')[0])
        out[path] = {"format": "svg", "width": w, "height": h, "frames": 1, "label": label, "bad": None,
                     "bytes": len(svg.encode())}

    # -- the image pipeline's bad inputs --------------------------------------------------
    rng = random.Random(7)
    corrupt = b"\x89PNG\r\n\x1a\n" + bytes(rng.randrange(256) for _ in range(600))
    put("/img/bad/corrupt.png", corrupt)
    out["/img/bad/corrupt.png"] = {"format": "png", "bad": "corrupt", "label": None, "bytes": len(corrupt),
                                   "notes": "PNG signature followed by random bytes: does not decode"}
    full = _jpeg(apple(), quality=90)
    trunc = full[: len(full) // 2]
    put("/img/bad/truncated.jpg", trunc)
    out["/img/bad/truncated.jpg"] = {"format": "jpeg", "bad": "truncated", "label": "a red apple with a green leaf",
                                     "bytes": len(trunc), "notes": "first half of a valid JPEG; no EOI marker"}
    put("/img/bad/empty.jpg", b"")
    out["/img/bad/empty.jpg"] = {"format": None, "bad": "empty", "label": None, "bytes": 0}
    fake = b"<!DOCTYPE html><html><head><title>Not an image</title></head><body><p>This is an HTML page served as image/jpeg.</p></body></html>\n"
    put("/img/bad/not-an-image.jpg", fake)
    out["/img/bad/not-an-image.jpg"] = {"format": "html", "bad": "not_an_image", "label": None,
                                        "bytes": len(fake), "notes": "HTML bytes with Content-Type image/jpeg"}
    frames = []
    for color in ((220, 20, 30), (30, 160, 50), (20, 60, 210), (250, 215, 30)):
        img, d = _canvas(size=(64, 64))
        d.rectangle((12, 12, 52, 52), fill=color)
        frames.append(img.convert("P", palette=Image.Palette.ADAPTIVE))
    buf = io.BytesIO()
    frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:], duration=200, loop=0)
    put("/img/bad/spinner.gif", buf.getvalue())
    out["/img/bad/spinner.gif"] = {"format": "gif", "width": 64, "height": 64, "frames": 4, "bad": "animated",
                                   "label": "a square changing colour: red, green, blue, yellow",
                                   "bytes": len(buf.getvalue())}
    buf = io.BytesIO()
    Image.new("RGB", (1, 1), WHITE).save(buf, format="GIF")
    put("/img/bad/pixel.gif", buf.getvalue())
    out["/img/bad/pixel.gif"] = {"format": "gif", "width": 1, "height": 1, "frames": 1, "bad": "too_small",
                                 "label": None, "bytes": len(buf.getvalue()), "notes": "a 1x1 tracking pixel"}
    img, d = _canvas(size=(800, 16))
    d.rectangle((0, 0, 800, 16), fill=(30, 60, 210))
    data = _png(img)
    put("/img/bad/banner.png", data)
    out["/img/bad/banner.png"] = {"format": "png", "width": 800, "height": 16, "frames": 1, "bad": "extreme_aspect",
                                  "label": "a thin blue horizontal bar", "bytes": len(data)}
    # dynamic / absent ones (served by server.py or not at all)
    out["/img/bad/huge-100mp.png"] = {"format": "png", "width": 10000, "height": 10000, "frames": 1,
                                      "bad": "decompression_bomb", "label": None, "bytes": None, "dynamic": True,
                                      "notes": "a 1-bit 10000x10000 PNG, made on first request (~12 KB)"}
    out["/img/bad/missing.png"] = {"format": None, "bad": "missing", "label": None, "bytes": None, "status": 404}
    return out
