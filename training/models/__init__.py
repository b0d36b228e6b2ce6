"""Model architectures: dense baseline, on-device KV-sharing model, Parallel-Track MoE.

    from training.models import get_preset, build_model, list_presets
    model = build_model(get_preset("tiny"))
    out = model(input_ids, targets=None, doc_ids=None)   # out.logits, out.loss, out.aux_loss

See README.md in this folder for the file map and state-dict names.
"""
from training.models.base import LanguageModel, ModelOutput
from training.models.config import ModelConfig, SequenceTooLongError, config_from_dict
from training.models.presets import get_preset, list_presets
from training.models.registry import build_model

__all__ = ["LanguageModel", "ModelConfig", "ModelOutput", "SequenceTooLongError", "build_model",
           "config_from_dict", "get_preset", "list_presets"]
