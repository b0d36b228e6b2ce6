"""Fused Triton kernels, each beside its eager reference (reference.py); models call
``training.kernels.ops`` (``from training.kernels import ops``).

Nothing is re-exported here on purpose: the kernel modules share their op's name
(``training.kernels.rms_norm`` is the module holding the Triton RMSNorm), and a function of the
same name on the package would shadow the module until the module is first imported.
"""
