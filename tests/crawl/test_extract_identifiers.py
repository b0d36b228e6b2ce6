"""A run of UUIDs is not text (crawl/extract_identifiers.py): a block of UUIDs goes; a sentence that
quotes one or two, a `<pre>` listing and a manual's hash example stay. The last test
runs the whole extractor on a product page whose "Sponsored" label is written as hidden UUID spans."""
import uuid

from crawl.extract import extract_page, parse_html
from crawl.extract_blocks import segment
from crawl.extract_identifiers import drop_identifier_runs, identifier_run

IDS = [str(uuid.UUID(int=(i + 1) * 0x1F2E3D4C5B6A79881726354453627180)) for i in range(6)]
# the obfuscation as a shop writes it: one visible letter per span, the rest a UUID a style rule hides
LABEL = "".join(f"<span class='v{i}'>{'Sponsored'[i]}</span><span class='h{i}'>{IDS[i % 6]}</span>" for i in range(9))


def test_identifier_runs_and_what_stays():
    assert identifier_run(" ".join(IDS[:3]))
    assert identifier_run("S" + IDS[0] + "p" + IDS[1] + "o" + IDS[2] + "n")
    assert not identifier_run("md5('abc') → 900150983cd24fb0d6963f7d28e17f72 a9993e364706816aba3e25717850c26c9cd0d89d")
    assert not identifier_run(f"Take note of the UUID of the root partition: {IDS[0]}")
    assert not identifier_run(f"Restore {IDS[0]} and {IDS[1]} from last night's backup of the cluster before noon")
    assert not identifier_run("Plain words with no identifier at all")
    html = (f"<html><body><p>Mount the disk by its UUID, {IDS[0]}, in fstab.</p><div>{LABEL}</div>"
            f"<pre>{IDS[1]}\n{IDS[2]}\n{IDS[3]}</pre><p>{IDS[3]} {IDS[4]} {IDS[5]}</p></body></html>")
    blocks = segment(parse_html(html)).blocks
    kept = [b.text for b, k in zip(blocks, drop_identifier_runs(blocks, [True] * len(blocks))) if k]
    assert kept == [f"Mount the disk by its UUID, {IDS[0]}, in fstab.", " ".join(IDS[1:4])]


def test_an_obfuscated_label_in_a_product_page_is_not_extracted():
    specs = "".join(f"<li>Part {i}: steel clutch plate of {200 + 10 * i} mm, with bearing and pressure ring</li>"
                    for i in range(6))
    html = ("<html><head><title>Clutch kit for vans</title></head><body><nav><a href='/'>Home</a></nav>"
            "<main><h1>Clutch kit for vans, 11-14 models</h1><p>EUR 355.58</p>"
            "<p>A complete clutch kit with the pressure plate, the disc and the release bearing, made for the "
            "diesel vans of the 2011 to 2014 model years and their five-speed gearboxes.</p>"
            f"<ul>{specs}</ul><div class='label'>{LABEL}</div>"
            "<p>Shipped within two days from the warehouse, with the fitting instructions in the box.</p></main>"
            "<footer>Contact us</footer></body></html>")
    text = extract_page(html, "https://shop.example/itm/1").text
    assert "release bearing" in text and "fitting instructions" in text
    assert not any(i[9:13] in text for i in IDS)
