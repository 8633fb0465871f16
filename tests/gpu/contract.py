"""The launcher's contract: a wrong tensor is rejected with a message, and nothing runs.

runtime/tlc/runtime.h promises that the C entry point checks every tensor (rank, dtype, shape
relations, unit-stride innermost dimension, null data) and returns TLC_ERROR_INVALID_ARGUMENT
with a message instead of launching. Each Mutation below breaks one valid argument list in one
way; the runner expects code 1, a message (naming the parameter where one tensor is at fault),
and every output still holding its poison afterwards (NaN, or an integer type's minimum: no
kernel ran).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import torch

from abi import TLC_ERROR_INVALID_ARGUMENT, TensorView
from problems import poison, still_poisoned


@dataclass
class Mutation:
    name: str
    views: list            # TensorViews in parameter order, one of them broken
    blamed: str | None     # the parameter the message must name, if one is at fault
    keepalive: list        # tensors the broken views point into
    poisoned: list         # tensors of the mutation that hold NaN and must keep it


def mutations(spec, tensors: list) -> list:
    """Broken variants of `tensors` (valid, in parameter order)."""
    params = spec.tensors
    first_in = next(i for i, p in enumerate(params) if p.role == "in")
    first_out = next(i for i, p in enumerate(params) if p.role == "out")
    views = [TensorView.of(t) for t in tensors]
    name_in, name_out = params[first_in].name, params[first_out].name
    x, y = tensors[first_in], tensors[first_out]
    result = []

    def replaced(index, view, blamed, name, keep=(), poisoned=()):
        broken = list(views)
        broken[index] = view
        result.append(Mutation(name, broken, blamed, list(keep), list(poisoned)))

    other = torch.float32 if x.dtype != torch.float32 else torch.float16
    x_dtype = x.to(other)
    replaced(first_in, TensorView.of(x_dtype), name_in, f"{name_in} as {other}", [x_dtype])

    x_rank = x.unsqueeze(0)
    replaced(first_in, TensorView.of(x_rank), name_in, f"{name_in} with an extra dimension",
             [x_rank])

    # Same shape, every other element of a twice-as-wide buffer: innermost stride 2. Over a
    # single element a stride means nothing (the view is contiguous), so then it is no breach.
    if x.shape[-1] > 1:
        wide = torch.empty(*x.shape[:-1], 2 * x.shape[-1], dtype=x.dtype, device=x.device)
        strided = wide[..., ::2]
        replaced(first_in, TensorView.of(strided), name_in, f"{name_in} with innermost stride 2",
                 [wide])

    null = TensorView.of(x)
    null.data = None
    replaced(first_in, null, name_in, f"{name_in} with a null data pointer")

    # The output one row longer than the inputs say: a shape-symbol (or fixed-dim) mismatch,
    # which the message may blame on either tensor. Poisoned too, so a launch would show.
    y_rows = torch.full((y.shape[0] + 1, *y.shape[1:]), poison(y.dtype), dtype=y.dtype, device=y.device)
    replaced(first_out, TensorView.of(y_rows), None, f"{name_out} with one more row", [y_rows],
             [y_rows])
    return result


@dataclass
class ContractResult:
    mutation: str
    passed: bool
    code: int
    message: str
    reason: str

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def check(entry, mutation: Mutation, scalars: list, outputs: list, stream: int,
          wait) -> ContractResult:
    """Calls the entry point with the broken views. `outputs` are the case's poisoned outputs;
    they, and the mutation's own poisoned tensors, must keep their poison (nothing launched)."""
    status = entry(mutation.views, scalars, stream)
    wait()
    untouched = all(still_poisoned(t) for t in list(outputs) + mutation.poisoned)
    problems = []
    if status.code != TLC_ERROR_INVALID_ARGUMENT:
        problems.append(f"code {status.code}, expected {TLC_ERROR_INVALID_ARGUMENT}")
    if not status.message.strip():
        problems.append("empty message")
    elif mutation.blamed and not re.search(rf"\b{re.escape(mutation.blamed)}\b", status.message):
        problems.append(f"message does not name '{mutation.blamed}'")
    if not untouched:
        problems.append("an output was written: the kernel ran")
    return ContractResult(mutation.name, not problems, status.code, status.message,
                          "; ".join(problems) or "rejected")
