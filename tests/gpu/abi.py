"""The C ABI of generated kernels (runtime/tlc/runtime.h), seen from Python through ctypes.

Every kernel KERNEL of a generated file exports

    int tlc_KERNEL(const tlc_tensor_view *T1, ..., <scalars>, void *stream,
                   char *error, size_t error_size);

This module mirrors `tlc_tensor_view` and the dtype codes, builds views from anything shaped
like a torch tensor (data_ptr(), dtype, shape, stride()), checks a generated file's prototype
against the signature the runner expects, and calls the entry point. It does not import torch,
so its pieces are unit-tested on machines without one.
"""
from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass

MAX_RANK = 8  # TLC_MAX_RANK

# enum tlc_dtype: the numbering is part of the C ABI.
DTYPE_CODES = {
    "f16": 0, "bf16": 1, "f32": 2, "f64": 3, "f8e4m3": 4, "f8e5m2": 5, "i4": 6, "u4": 7,
    "i8": 8, "u8": 9, "i16": 10, "i32": 11, "u32": 12, "i64": 13, "bool": 14, "f4e2m1": 15,
}
# Two elements per byte (element 2c in the low nibble of byte c).
PACKED_DTYPES = ("i4", "u4", "f4e2m1")
# f4e2m1 (OCP FP4: a sign, 2 exponent bits with bias 1, 1 mantissa bit) by nibble: the tests'
# decoding, independent of the kernels' bit placement.
FP4_E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)


def packed_values(raw: bytes, dtype: str) -> list:
    """The elements of packed bytes (two per byte, element 2c in the low nibble of byte c) as
    Python numbers: i4 sign-extended, u4 as is, f4e2m1 decoded by FP4_E2M1_VALUES."""
    nibbles = [(b >> shift) & 0xF for b in raw for shift in (0, 4)]
    if dtype == "f4e2m1":
        return [FP4_E2M1_VALUES[q] for q in nibbles]
    if dtype == "i4":
        return [q - 16 if q >= 8 else q for q in nibbles]
    if dtype == "u4":
        return nibbles
    raise ValueError(f"packed_values: '{dtype}' is not a packed dtype")

# str(torch.dtype) -> tlc dtype name. Keyed by the printed name so torch is not needed here.
TORCH_DTYPES = {
    "torch.float16": "f16", "torch.bfloat16": "bf16", "torch.float32": "f32",
    "torch.float64": "f64", "torch.float8_e4m3fn": "f8e4m3", "torch.float8_e5m2": "f8e5m2",
    "torch.int8": "i8", "torch.uint8": "u8", "torch.int16": "i16", "torch.int32": "i32",
    "torch.uint32": "u32", "torch.int64": "i64", "torch.bool": "bool",
}

# Status codes of the C entry points.
TLC_OK = 0
TLC_ERROR_INVALID_ARGUMENT = 1
TLC_ERROR_LAUNCH = 2

ERROR_BUFFER_SIZE = 1024

SCALAR_CTYPES = {"f32": ctypes.c_float, "f64": ctypes.c_double, "i32": ctypes.c_int32,
                 "i64": ctypes.c_int64, "bool": ctypes.c_bool}

# How the generated prototype spells each scalar type.
_C_SCALAR_SPELLINGS = {"float": "f32", "double": "f64", "int32_t": "i32", "int": "i32",
                       "int64_t": "i64", "long long": "i64", "bool": "bool", "_Bool": "bool"}


class TensorView(ctypes.Structure):
    """struct tlc_tensor_view: data, dtype, rank, shape[8], strides[8] (strides in elements)."""
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_RANK), ("strides", ctypes.c_int64 * MAX_RANK)]

    @classmethod
    def make(cls, data: int | None, dtype: str, shape, strides) -> "TensorView":
        if len(shape) != len(strides):
            raise ValueError(f"shape {tuple(shape)} and strides {tuple(strides)} differ in rank")
        if len(shape) > MAX_RANK:
            raise ValueError(f"rank {len(shape)} exceeds TLC_MAX_RANK = {MAX_RANK}")
        if dtype not in DTYPE_CODES:
            raise ValueError(f"unknown tlc dtype '{dtype}'")
        view = cls()
        view.data = data
        view.dtype = DTYPE_CODES[dtype]
        view.rank = len(shape)
        for i, (extent, stride) in enumerate(zip(shape, strides)):
            view.shape[i] = int(extent)
            view.strides[i] = int(stride)
        return view

    @classmethod
    def of(cls, tensor) -> "TensorView":
        """A view of a torch tensor (or anything with data_ptr(), dtype, shape, stride()). A
        tensor of packed i4/u4 bytes (mark_packed) gives the logical view: torch has no 4-bit
        dtype, so the bytes travel as uint8 [..., K / 2] and the view is [..., K], strides in
        4-bit elements (tlc/runtime.h): the innermost extent and the other strides doubled."""
        packed = getattr(tensor, PACKED_ATTR, None)
        name = TORCH_DTYPES.get(str(tensor.dtype))
        if name is None:
            raise ValueError(f"no tlc dtype for {tensor.dtype}")
        shape, strides = list(tensor.shape), list(tensor.stride())
        if packed is not None and name in ("u8", "i8") and shape:
            name = packed
            shape[-1] *= 2
            strides = [st if i == len(strides) - 1 and st == 1 else 2 * st for i, st in enumerate(strides)]
        return cls.make(tensor.data_ptr(), name, tuple(shape), tuple(strides))


# The attribute mark_packed sets on a torch tensor of packed 4-bit bytes.
PACKED_ATTR = "_tlc_packed"


def mark_packed(tensor, dtype: str):
    """Marks a uint8 tensor [..., K / 2] as the bytes of an i4/u4/f4e2m1 tensor [..., K] (element 2c in
    the low nibble of byte c) for TensorView.of; returns it. Tensors derived from it (copies,
    views) are plain bytes again."""
    if dtype not in PACKED_DTYPES:
        raise ValueError(f"mark_packed: '{dtype}' is not a packed dtype")
    setattr(tensor, PACKED_ATTR, dtype)
    return tensor


# ---- Prototype check --------------------------------------------------------------------------

@dataclass(frozen=True)
class Signature:
    """What a C entry point takes before (stream, error, error_size)."""
    tensors: int
    scalars: tuple  # tlc dtype names, in order

    def describe(self) -> str:
        return f"{self.tensors} tensor(s), scalars ({', '.join(self.scalars) or 'none'})"


class PrototypeError(ValueError):
    pass


_PROTOTYPE = re.compile(r"\bint\s+tlc_(\w+)\s*\(([^)]*)\)")


def find_prototypes(source: str) -> dict:
    """kernel name -> Signature for every `int tlc_NAME(...)` in a generated file. The trailing
    (void *stream, char *error, size_t error_size) is checked and dropped."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", source, flags=re.S)
    found = {}
    for match in _PROTOTYPE.finditer(text):
        found[match.group(1)] = _parse_params(match.group(1), match.group(2))
    return found


def _parse_params(kernel: str, params_text: str) -> Signature:
    params = [" ".join(p.split()) for p in params_text.split(",")]
    if len(params) < 3:
        raise PrototypeError(f"tlc_{kernel}: expected at least (stream, error, error_size)")
    *body, stream, error, error_size = params
    tail_ok = (re.match(r"void\s*\*", stream) and re.match(r"char\s*\*", error)
               and re.match(r"size_t\b", error_size))
    if not tail_ok:
        raise PrototypeError(f"tlc_{kernel}: the last parameters must be (void *stream, "
                             f"char *error, size_t error_size), got ({stream}, {error}, "
                             f"{error_size})")
    tensors, scalars = 0, []
    for p in body:
        if "tlc_tensor_view" in p or "TensorView" in p:
            if scalars:
                raise PrototypeError(f"tlc_{kernel}: tensor parameter after a scalar: {p}")
            tensors += 1
            continue
        spelled = re.sub(r"^const\s+", "", p).rsplit(" ", 1)[0] if " " in p else p
        scalar = _C_SCALAR_SPELLINGS.get(spelled)
        if scalar is None:
            raise PrototypeError(f"tlc_{kernel}: unrecognized parameter '{p}'")
        scalars.append(scalar)
    return Signature(tensors, tuple(scalars))


def expected_signature(spec) -> Signature:
    """The Signature a cases.Launch (or a KernelSpec of one launch) implies."""
    return Signature(len(spec.tensors), tuple(p.scalar_type for p in spec.scalars))


def _launches(spec) -> tuple:
    """The entry points a KernelSpec calls, in order (a plain Launch-like object: itself)."""
    return getattr(spec, "launches", (spec,))


def check_prototype(source: str, spec) -> str | None:
    """None when the file declares tlc_<kernel> with the expected signature for every launch of
    `spec` (the kernel and its `then` launches), else why not."""
    try:
        found = find_prototypes(source)
    except PrototypeError as e:
        return str(e)
    for launch in _launches(spec):
        if launch.kernel not in found:
            names = ", ".join(f"tlc_{k}" for k in found) or "none"
            return f"no entry point tlc_{launch.kernel} (found: {names})"
        want, got = expected_signature(launch), found[launch.kernel]
        if want != got:
            return (f"tlc_{launch.kernel} takes {got.describe()}, the runner expects "
                    f"{want.describe()}")
    return None


# ---- Calling ----------------------------------------------------------------------------------

class Status:
    def __init__(self, code: int, message: str):
        self.code, self.message = code, message

    @property
    def ok(self) -> bool:
        return self.code == TLC_OK

    def __repr__(self) -> str:
        return f"Status({self.code}, {self.message!r})"


class KernelEntry:
    """One C entry point of a loaded library, typed from its KernelSpec (of one launch) or from
    a cases.Launch."""

    def __init__(self, library: ctypes.CDLL, spec):
        self.spec = spec
        self._fn = getattr(library, f"tlc_{spec.kernel}")
        self._fn.restype = ctypes.c_int
        self._fn.argtypes = ([ctypes.POINTER(TensorView)] * len(spec.tensors)
                             + [SCALAR_CTYPES[p.scalar_type] for p in spec.scalars]
                             + [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t])
        self._error = ctypes.create_string_buffer(ERROR_BUFFER_SIZE)

    def bind(self, views: list, scalars: list = (), stream: int | None = None):
        """Packs the arguments once and returns a zero-argument callable returning the code,
        so timing loops measure the kernel, not the packing."""
        if len(views) != len(self.spec.tensors) or len(scalars) != len(self.spec.scalars):
            raise ValueError(f"tlc_{self.spec.kernel}: expected {len(self.spec.tensors)} "
                             f"views and {len(self.spec.scalars)} scalars")
        refs = [ctypes.byref(v) for v in views]
        args = refs + list(scalars) + [stream, self._error, ERROR_BUFFER_SIZE]
        fn = self._fn

        def call() -> int:
            return fn(*args)
        call.keepalive = views  # the views must outlive the pointers to them
        return call

    def message(self) -> str:
        """The error message of the last failed call through this entry."""
        return self._error.value.decode(errors="replace")

    def __call__(self, views: list, scalars: list = (), stream: int | None = None) -> Status:
        self._error.value = b""
        code = self.bind(views, scalars, stream)()
        return Status(code, self.message() if code != TLC_OK else "")


class Operation:
    """The entry points of a KernelSpec with `then` launches, called in order as one operation
    (split-KV decoding: the split pass, then the combine) on one stream. Same interface as
    KernelEntry: views and scalars are those of spec.tensors and spec.scalars (the operation's,
    each once), and each entry gets the ones its parameters name. A call stops at the first
    entry that returns an error, so that an argument one launcher rejects launches nothing;
    message() is then that entry's message."""

    def __init__(self, library: ctypes.CDLL, spec):
        self.spec = spec
        self.entries = [KernelEntry(library, launch) for launch in spec.launches]
        self._last = self.entries[0]

    def bind(self, views: list, scalars: list = (), stream: int | None = None):
        kernels = "+".join(f"tlc_{e.spec.kernel}" for e in self.entries)
        if len(views) != len(self.spec.tensors) or len(scalars) != len(self.spec.scalars):
            raise ValueError(f"{kernels}: expected {len(self.spec.tensors)} views and "
                             f"{len(self.spec.scalars)} scalars")
        view_of = dict(zip((p.name for p in self.spec.tensors), views))
        scalar_of = dict(zip((p.name for p in self.spec.scalars), scalars))
        steps = [(e, e.bind([view_of[p.name] for p in e.spec.tensors],
                            [scalar_of[p.name] for p in e.spec.scalars], stream))
                 for e in self.entries]

        def call() -> int:
            for entry, step in steps:
                self._last = entry
                code = step()
                if code != TLC_OK:
                    return code
            return TLC_OK
        call.keepalive = views
        return call

    def message(self) -> str:
        """The error message of the entry that failed in the last call."""
        return self._last.message()

    def __call__(self, views: list, scalars: list = (), stream: int | None = None) -> Status:
        for e in self.entries:
            e._error.value = b""
        code = self.bind(views, scalars, stream)()
        return Status(code, self.message() if code != TLC_OK else "")


def load_entry(so_path: str, spec):
    """The callable for a KernelSpec: its KernelEntry, or an Operation when the spec has `then`
    launches."""
    # RTLD_LOCAL: every build exports tlc_gemm-like names and a static CUDA runtime of its own.
    library = ctypes.CDLL(so_path, mode=ctypes.RTLD_LOCAL)
    if getattr(spec, "then", ()):
        return Operation(library, spec)
    return KernelEntry(library, spec)
