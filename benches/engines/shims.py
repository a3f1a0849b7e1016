"""Import shims that let the engines' parser modules load without a GPU stack.

vLLM's and SGLang's parser modules import torch, CUDA helpers and their server packages at module
level, but never call them on the parsing path. ``install()`` puts stand-in modules for those
names into ``sys.modules`` before the engines are imported: any attribute of a stand-in is
another stand-in (a class that accepts any arguments), so ``from torch import Tensor`` and
decorators such as ``@torch.inference_mode()`` succeed and do nothing.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any, Iterable, Optional, Sequence

# Top-level packages replaced whole (never imported for real).
STUBBED = ("torch", "triton", "torchvision", "torchaudio", "flashinfer", "vllm._C", "sgl_kernel",
           "vllm.env_override")


class _Anything(type):
    """A class whose every attribute is a stand-in class, and which can be called, subclassed,
    indexed and used as a decorator."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _make(f"{cls.__name__}.{name}")

    def __getitem__(cls, item: Any) -> Any:
        return cls

    def __or__(cls, other: Any) -> Any:
        return cls

    def __ror__(cls, other: Any) -> Any:
        return cls


def _instance_attribute(self: Any, name: str) -> Any:
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)
    return _make(f"{type(self).__name__}.{name}")


def _make(name: str) -> Any:
    def new(cls: Any, *args: Any, **kwargs: Any) -> Any:
        # Used as a bare decorator: give the function back.
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], type):
            return args[0]
        return object.__new__(cls)

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return args[0] if len(args) == 1 and callable(args[0]) else self

    return _Anything(name, (), {"__new__": new, "__init__": lambda self, *a, **k: None, "__call__": call,
                                "__enter__": lambda self: self, "__exit__": lambda self, *a: False,
                                "__bool__": lambda self: False, "__getattr__": _instance_attribute})


# The few stand-ins that must return something real: vLLM registers custom ops at import time
# and builds their schema strings from ``torch.library.infer_schema``.
CONCRETE = {"torch.library": {"infer_schema": lambda *args, **kwargs: "() -> ()"}}


class _StubModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _make(f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, names: Iterable[str]) -> None:
        self.names = tuple(names)

    def _stubbed(self, fullname: str) -> bool:
        return any(fullname == n or fullname.startswith(n + ".") for n in self.names)

    def find_spec(self, fullname: str, path: Optional[Sequence[str]], target: Any = None) -> Any:
        if self._stubbed(fullname):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        module = _StubModule(spec.name)
        module.__path__ = []  # a package, so submodules import too
        module.__version__ = "0.0.0"  # type: ignore[attr-defined]
        for name, value in CONCRETE.get(spec.name, {}).items():
            setattr(module, name, value)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def install(extra: Iterable[str] = ()) -> None:
    """Stub the GPU stack (and ``extra`` top-level names) for the rest of this process."""
    if not any(isinstance(f, _StubFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _StubFinder(STUBBED + tuple(extra)))
