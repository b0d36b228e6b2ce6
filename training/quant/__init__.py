"""Compression of the trained models, as the 2025 report does it for the on-device model.

    grid.py        balanced b-bit grids, codes <-> weights, straight-through rounding, MSE clip search
    fake_quant.py  QAT: fake-quantised Linear/Embedding weights (torch parametrizations) with a
                   learnable clipping factor per group; ``freeze`` turns them into codes + scales
    qat.py         the QAT training loop
    ptq.py         post-training baselines on the same grids: round-to-nearest and GPTQ
    lora.py        LoRA recovery adapters (peft) on the frozen quantised base, saved apart from it
    packed.py      the packed file: 2-bit codes four to a byte, 4-bit two to a byte, fp16 scales
    packed_linear.py  a Linear that keeps 2-bit codes packed and multiplies through the Triton kernel
    astc.py        server-side weights through ARM's ``astcenc`` (6x6 blocks: 3.56 bits per weight)
    evaluate.py    held-out loss, with or without the 8-bit KV cache
    data.py        token windows for training, calibration and evaluation

Every quantised weight is ``level * step`` with ``level`` on the grid and ``step`` an fp16 number
per (output row, group); the same arithmetic runs in QAT, in PTQ and when a packed file is loaded,
so a loaded file gives the fake-quantised model's logits bit for bit.
"""
