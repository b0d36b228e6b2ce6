"""Image-text data from crawled pages, one page, image or pair at a time: plain functions, no Beam.

The images stage (pipelines/images_pipeline.py) is Beam wiring around these steps:

- `config`: `ImagesConfig`, every option of the stage;
- `refs`: a page's <img> references and the text around each;
- `image_info`: one image (fetched live or read from a WARC record) checked with Pillow, as a dict;
- `pairs`: the (image, alt text) and (image, figcaption) rows of one reference, their drop reason,
  duplicates and the CLIP cut applied;
- `interleaved`: one page's interleaved document, its text split at image positions;
- `report` and `contact_sheet`: the report's events, samples, CLIP histogram and contact sheets.

The verdicts themselves are filters (filters/alt_text.py, image_check.py, image_dedup.py,
clip_select.py); fetching is crawl code (crawl/image_fetch.py, image_warc.py).
"""
