"""Inference above training/models: guided (typed) generation, tool calling, speculative decoding,
LoRA adapters switched per request. A plain library: imports training/ and corpus/, never pipelines/.

    from inference import Generator
    gen = Generator.from_checkpoint("out/demo/train", tokenizer="out/demo/tokenizer")
    person = gen.respond("Describe a person.", Person)        # a Person instance
"""
