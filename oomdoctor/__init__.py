"""oomdoctor: explain a CUDA out-of-memory crash of an LLM fine-tuning run and plan the fix."""

__version__ = "0.1.0"
