"""Pillow checks: every bad input gets its own drop reason; good ones are re-encoded and hashed."""
from __future__ import annotations

import io

import pytest
from PIL import Image

from corpus.errors import ConfigError
from filters.image_check import ImageCheckConfig, check_image, sniff


def enc(im, fmt, **kw) -> bytes:
    b = io.BytesIO()
    im.save(b, format=fmt, **kw)
    return b.getvalue()


def gradient(w=300, h=200, mode="RGB"):
    im = Image.linear_gradient("L").resize((w, h)).convert(mode)
    return im


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP", "GIF"])
def test_accepted_formats_are_reencoded_to_bounded_jpeg(fmt):
    data = enc(gradient(1200, 800), fmt)
    r = check_image(data, ImageCheckConfig(out_max_side=256))
    assert r.ok, r.detail
    assert (r.orig_format, r.orig_width, r.orig_height) == (fmt, 1200, 800)
    assert (r.width, r.height) == (256, 171) and r.mime == "image/jpeg"
    assert Image.open(io.BytesIO(r.image)).format == "JPEG"
    assert len(r.sha256) == 64 and len(r.phash) == 16


def test_animated_gif_first_frame_or_drop():
    frames = [Image.new("RGB", (90, 90), c) for c in ((255, 0, 0), (0, 255, 0), (0, 0, 255))]
    b = io.BytesIO()
    frames[0].save(b, format="GIF", save_all=True, append_images=frames[1:], duration=50)
    r = check_image(b.getvalue(), ImageCheckConfig(animated="first_frame"))
    assert r.ok and r.animated
    px = Image.open(io.BytesIO(r.image)).convert("RGB").getpixel((45, 45))
    assert px[0] > 200 and px[1] < 60          # the first (red) frame
    assert check_image(b.getvalue()).reason == "image_animated"          # the default


def test_rgba_is_flattened_on_white():
    r = check_image(enc(Image.new("RGBA", (64, 64), (0, 0, 0, 0)), "PNG"))
    assert r.ok
    assert Image.open(io.BytesIO(r.image)).getpixel((10, 10))[0] > 240


def test_bad_inputs_each_get_a_reason():
    good_png = enc(gradient(), "PNG")
    good_jpg = enc(gradient(), "JPEG")
    cases = {
        b"": "image_empty",
        b"<!DOCTYPE html><html><head><title>404</title></head></html>": "image_is_html",
        b"\x00\x01\x02garbage" * 50: "image_not_an_image",
        good_png[: len(good_png) // 2]: "image_truncated",
        good_jpg[: len(good_jpg) // 2]: "image_truncated",
        enc(gradient(), "BMP"): "image_unsupported_format",

        enc(Image.new("RGB", (20, 40)), "PNG"): "image_too_small",
        enc(Image.new("RGB", (900, 100)), "PNG"): "image_bad_aspect_ratio",
    }
    for data, reason in cases.items():
        r = check_image(data)
        assert r.reason == reason, (data[:20], r.reason, r.detail)
        assert r.image is None
    corrupt = bytearray(good_png)
    corrupt[60:200] = b"\x00" * 140            # inside the IDAT stream
    assert check_image(bytes(corrupt)).reason in ("image_corrupt", "image_truncated")


def test_decompression_bomb_is_refused_before_decoding():
    # 100 megapixels of 1-bit PNG compress to ~400 KB; the header alone must stop it
    data = enc(Image.new("1", (10000, 10000)), "PNG")
    r = check_image(data)
    assert r.reason == "image_too_many_pixels"
    small_cap = check_image(enc(gradient(400, 400), "PNG"), ImageCheckConfig(max_pixels=100_000))
    assert small_cap.reason == "image_too_many_pixels" and "160000" in small_cap.detail


def test_byte_cap_and_config_validation():
    assert check_image(enc(gradient(), "PNG"), ImageCheckConfig(max_bytes=100)).reason == "image_too_many_bytes"
    with pytest.raises(ConfigError):
        ImageCheckConfig(svg="keep")
    with pytest.raises(ConfigError):
        ImageCheckConfig(min_side=50, max_side=10)


def test_sniff_ignores_claimed_type():
    assert sniff(b"\x89PNG\r\n\x1a\n....") == "PNG"
    assert sniff(b"  <html><body>") == "HTML"
    assert sniff(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "WEBP"


def test_svg_rasterized_safely_or_dropped(tmp_path):
    svg = (b'<svg xmlns="http://www.w3.org/2000/svg" width="80" height="60">'
           b'<rect width="80" height="60" fill="#0000ff"/></svg>')
    r = check_image(svg)
    assert r.ok and r.orig_format == "SVG" and (r.width, r.height) == (512, 384)
    assert Image.open(io.BytesIO(r.image)).convert("RGB").getpixel((100, 100))[2] > 200
    assert check_image(svg, ImageCheckConfig(svg="drop")).reason == "image_svg_dropped"
    # external resources are never loaded: a file:// image on disk must not show up
    secret = tmp_path / "secret.png"
    Image.new("RGB", (60, 60), (0, 255, 0)).save(secret)
    evil = (f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="60" '
            f'height="60"><image xlink:href="file://{secret}" width="60" height="60"/></svg>').encode()
    r = check_image(evil)
    px = Image.open(io.BytesIO(r.image)).convert("RGB").getpixel((200, 200))
    assert r.ok and px[0] > 200        # white background: the green file was not read
    xxe = (b'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
           b'<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><text>&x;</text></svg>')
    assert check_image(xxe).reason == "image_corrupt"
    tall = b'<svg xmlns="http://www.w3.org/2000/svg" width="1" height="100000"></svg>'
    assert check_image(tall).reason == "image_bad_aspect_ratio"


def test_known_signature_with_garbage_is_corrupt_and_banners_are_aspect():
    assert check_image(b"\x89PNG\r\n\x1a\n" + b"\x00" * 300).reason == "image_corrupt"
    assert check_image(enc(Image.new("RGB", (800, 16)), "PNG")).reason == "image_bad_aspect_ratio"
