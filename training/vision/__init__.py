"""Vision for the language models: a ViTDet encoder with Register-Window (encoder.py, config.py),
the vision-language adapter (adapter.py), image tokens in the LMs (vlm.py), image-text samples and
their mixed loader (image_policy.py, samples.py, loader.py, data.py), staged training behind
`cidermill train` (run_config.py, stages.py) and CPU evaluation (evaluate.py)."""
