#!/usr/bin/env python3
"""oastore: build Ollama model stores (and the files in them) for tests.

Python 3 standard library only.  Used by tests/cli/test_*.py and by
tests/tools/make_demo_store.py.  Run ``python3 oastore.py --selftest`` to check
the library against the reference data and against its own small readers.

Everything here follows /work/shared/spec/ollama-store.md ("store spec") and
/work/shared/spec/gguf.md ("GGUF spec").  Section numbers below refer to them.

Overview
--------
Formats
    gguf_bytes(kv, tensors, version=3, big_endian=False, alignment=32, ...)
    safetensors_bytes(tensors, metadata=None, pad=True)
    read_gguf(data) / read_safetensors(data)      small readers (for checks)
    gguf_nbytes(dims, ggml_type), gguf_param_count(data)
    typed(type, value)                            force a GGUF value type in a dict
Ollama's formatting rules
    human_bytes(n)        format.HumanBytes  (ollama list SIZE column, §4.2)
    human_number(n)       format.HumanNumber (config model_type, §3)
    go_json(obj)          Go json.Marshal byte form (compact, <>& escaped)
    manifest_id(data)     the ID column / digest, with the decoder rule of §4.1
    manifest_size(data)   Manifest.Size(): config.size + sum of layer sizes
    parse_name(name), display_shortest(host, ns, model, tag)
    config_v2(**fields)   a ConfigV2 dict in Go's field order, omitempty applied
Stores
    Store(root)           .add_blob .layer .config .add_manifest .write_raw
                          .partial_download .create_temp .tmp_download
                          .symlink .set_mtime .age .blob_path .manifest_path
Model builders
    tiny_llama_gguf(...), tiny_projector_gguf(...), tiny_adapter_gguf(...)
    tiny_mlx_model(store, ...)   -> (config_layer, layers)
    gguf_config(store, gguf, layers, ...) -> config layer for a GGUF model
    mlx_param_count(store, layers)  show's parameter count for MLX layers

Import from a test:
    sys.path.insert(0, os.path.join(os.environ["OA_SOURCE_DIR"], "tests",
                                    "tools"))
    import oastore as oa

All output is deterministic: the same arguments give the same bytes.
"""

import hashlib
import json
import math
import os
import struct
import sys
import zlib

__all__ = [
    "GGUF_TYPES", "GGML_TYPES", "ST_DTYPE_SIZES", "typed", "gguf_bytes",
    "gguf_nbytes", "read_gguf", "gguf_param_count", "safetensors_bytes",
    "read_safetensors", "det_bytes", "human_bytes", "human_number", "go_json",
    "manifest_id", "manifest_size", "decoder_boundaries", "parse_name",
    "display_shortest", "config_v2", "Store", "tiny_llama_gguf",
    "tiny_projector_gguf", "tiny_adapter_gguf", "tiny_mlx_model", "gguf_config",
    "FILE_TYPES", "MEDIA_PREFIX", "MT_MANIFEST", "MT_CONFIG", "MT_MANIFEST_LIST",
    "v2_host",
    "mlx_param_count", "selftest",
]

MEDIA_PREFIX = "application/vnd.ollama.image."
MT_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
MT_CONFIG = "application/vnd.docker.container.image.v1+json"
MT_MANIFEST_LIST = "application/vnd.ollama.manifest.list.v2+json"

# --------------------------------------------------------------------------
# Deterministic filler
# --------------------------------------------------------------------------


def det_bytes(n, seed=""):
    """n deterministic bytes derived from ``seed`` (a str or bytes)."""
    if isinstance(seed, str):
        seed = seed.encode()
    s = zlib.crc32(seed) & 0xFFFFFFFF
    a, b = s & 0xFF, ((s >> 8) & 0xFE) | 1
    pattern = bytes((a + i * b) & 0xFF for i in range(251))  # prime period
    reps = n // len(pattern) + 1
    return (pattern * reps)[:n]


# --------------------------------------------------------------------------
# GGUF (GGUF spec §1-§3)
# --------------------------------------------------------------------------

# value type ids (§1.3); names accepted by typed()/gguf_bytes()
GGUF_TYPES = {
    "u8": 0, "uint8": 0, "i8": 1, "int8": 1, "u16": 2, "uint16": 2,
    "i16": 3, "int16": 3, "u32": 4, "uint32": 4, "i32": 5, "int32": 5,
    "f32": 6, "float32": 6, "bool": 7, "str": 8, "string": 8,
    "arr": 9, "array": 9, "u64": 10, "uint64": 10, "i64": 11, "int64": 11,
    "f64": 12, "float64": 12,
}
_SCALAR_FMT = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f",
               7: "B", 10: "Q", 11: "q", 12: "d"}

# ggml_type id -> (name, elements per block, bytes per block)  (§3)
# Removed types keep their historical sizes; 4 and 5 have none (0, 0).
GGML_TYPES = {
    0: ("f32", 1, 4), 1: ("f16", 1, 2), 2: ("q4_0", 32, 18),
    3: ("q4_1", 32, 20), 4: ("q4_2", 0, 0), 5: ("q4_3", 0, 0),
    6: ("q5_0", 32, 22), 7: ("q5_1", 32, 24), 8: ("q8_0", 32, 34),
    9: ("q8_1", 32, 36), 10: ("q2_K", 256, 84), 11: ("q3_K", 256, 110),
    12: ("q4_K", 256, 144), 13: ("q5_K", 256, 176), 14: ("q6_K", 256, 210),
    15: ("q8_K", 256, 292), 16: ("iq2_xxs", 256, 66), 17: ("iq2_xs", 256, 74),
    18: ("iq3_xxs", 256, 98), 19: ("iq1_s", 256, 50), 20: ("iq4_nl", 32, 18),
    21: ("iq3_s", 256, 110), 22: ("iq2_s", 256, 82), 23: ("iq4_xs", 256, 136),
    24: ("i8", 1, 1), 25: ("i16", 1, 2), 26: ("i32", 1, 4), 27: ("i64", 1, 8),
    28: ("f64", 1, 8), 29: ("iq1_m", 256, 56), 30: ("bf16", 1, 2),
    31: ("q4_0_4_4", 32, 18), 32: ("q4_0_4_8", 32, 18),
    33: ("q4_0_8_8", 32, 18), 34: ("tq1_0", 256, 54), 35: ("tq2_0", 256, 66),
    36: ("iq4_nl_4_4", 32, 18), 37: ("iq4_nl_4_8", 32, 18),
    38: ("iq4_nl_8_8", 32, 18), 39: ("mxfp4", 32, 17), 40: ("nvfp4", 64, 36),
    41: ("q1_0", 128, 18), 42: ("q2_0", 64, 18),
}
_GGML_BY_NAME = {v[0].lower(): k for k, v in GGML_TYPES.items()}

# llama_ftype id -> Ollama FileType.String() (GGUF spec §2)
FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
    10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S",
    15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS",
    20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S",
    25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M",
    30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0",
    38: "MXFP4_MOE", 39: "NVFP4", 40: "Q1_0",
}


class typed:
    """A GGUF value with an explicit type, for use as a value in a kv dict.

    typed('u64', 4096); typed('arr', ('i32', [1, 2])); typed(7, 2) (a bool
    byte of 2, which is invalid per the spec but accepted by most readers).
    """

    __slots__ = ("type", "value")

    def __init__(self, type_, value):
        self.type = type_
        self.value = value

    def __repr__(self):
        return "typed(%r, %r)" % (self.type, self.value)


def _type_id(t):
    if isinstance(t, int):
        return t
    if isinstance(t, str):
        key = t.lower()
        if key in GGUF_TYPES:
            return GGUF_TYPES[key]
    raise ValueError("unknown GGUF value type %r" % (t,))


def _ggml_type_id(t):
    if isinstance(t, int):
        return t
    key = t.lower()
    if key in _GGML_BY_NAME:
        return _GGML_BY_NAME[key]
    raise ValueError("unknown ggml type %r" % (t,))


def _infer_int(values):
    lo, hi = min(values), max(values)
    if lo >= 0:
        return 4 if hi < 2 ** 32 else 10
    return 5 if (lo >= -2 ** 31 and hi < 2 ** 31) else 11


def _infer(value):
    """(type_id, value) for a plain Python value (dict-style kv input).

    bool->BOOL, int->UINT32 (INT32 if negative, 64-bit if it does not fit),
    float->FLOAT32, str/bytes->STRING, list/tuple->ARRAY (element type from
    the elements; ints as above over all elements, empty -> UINT32 array).
    """
    if isinstance(value, typed):
        return _type_id(value.type), value.value
    if isinstance(value, bool):
        return 7, value
    if isinstance(value, int):
        return _infer_int([value]), value
    if isinstance(value, float):
        return 6, value
    if isinstance(value, (str, bytes)):
        return 8, value
    if isinstance(value, (list, tuple)):
        items = list(value)
        if not items:
            return 9, (4, [])
        if all(isinstance(x, bool) for x in items):
            return 9, (7, items)
        if all(isinstance(x, int) and not isinstance(x, bool) for x in items):
            return 9, (_infer_int(items), items)
        if all(isinstance(x, (int, float)) and not isinstance(x, bool)
               for x in items):
            return 9, (6, items)
        if all(isinstance(x, (str, bytes)) for x in items):
            return 9, (8, items)
        if all(isinstance(x, (list, tuple)) for x in items):
            return 9, (9, [_infer(x)[1] for x in items])
        raise ValueError("cannot infer a GGUF array type for %r" % (value,))
    raise ValueError("cannot infer a GGUF type for %r" % (value,))


class _W:
    def __init__(self, version, big_endian):
        self.e = ">" if big_endian else "<"
        self.cnt = "I" if version == 1 else "Q"  # v1: u32 lengths/counts
        self.out = bytearray()

    def p(self, fmt, *v):
        self.out += struct.pack(self.e + fmt, *v)

    def count(self, n):
        self.p(self.cnt, n)

    def string(self, s):
        if isinstance(s, str):
            s = s.encode("utf-8")
        self.count(len(s))
        self.out += s

    def value(self, t, v):
        if t in _SCALAR_FMT:
            if t == 7:
                v = int(v)
            self.p(_SCALAR_FMT[t], v)
        elif t == 8:
            self.string(v)
        elif t == 9:
            et, items = v
            et = _type_id(et)
            self.p("I", et)
            self.count(len(items))
            for it in items:
                self.value(et, it)
        else:
            raise ValueError("bad GGUF value type %d" % t)


def _align_up(n, a):
    return (n + a - 1) // a * a if a > 0 else n


def gguf_nbytes(dims, ggml_type):
    """Byte size of a tensor: ne0/blck * type_size * ne1*ne2*ne3 (§1.5)."""
    _, blck, size = GGML_TYPES[_ggml_type_id(ggml_type)]
    dims = list(dims) or [1]
    if blck == 0:
        return 0
    n = dims[0] // blck * size
    for d in dims[1:]:
        n *= d
    return n


def _norm_kv(kv):
    """kv (a dict or a list of (key, type, value)) -> [(key, type_id, value)]."""
    out = []
    if isinstance(kv, dict):
        for k, v in kv.items():
            t, val = _infer(v)
            out.append((k, t, val))
    else:
        for item in kv:
            k, t, v = item
            t = _type_id(t)
            if isinstance(v, typed):
                v = v.value
            out.append((k, t, v))
    return out


def gguf_bytes(kv, tensors=(), version=3, big_endian=False, alignment=32,
               add_alignment_key=True, pad_last=True):
    """Return the bytes of a GGUF file.

    kv        dict {key: value} (types inferred, see _infer; wrap a value in
              typed(...) to force one) or a list of (key, type, value) where
              type is an id 0..12 or a name ('u32', 'str', 'arr', ...).  An
              ARRAY value is (element_type, [items]); nested arrays use
              element type 'arr' with (element_type, items) items.  Strings
              may be str (UTF-8) or raw bytes.
    tensors   list of (name, dims, ggml_type[, data[, offset]]): dims is ne0
              first; ggml_type an id or a name ('q4_K', 'f32', ...).  data (or
              None) replaces the deterministic filler (any length, for
              malformed files); offset overrides the computed offset.
    version   1 (u32 counts/lengths/dims), 2 or 3.  Other values are written
              as given (v2/v3 layout).
    big_endian  writes the magic as the bytes "GGUF", everything else
              (version included) big-endian, as ggml/gguf-py do (§1.7).
    alignment the data alignment.  If it is not 32, add_alignment_key is true
              and kv has no 'general.alignment', a u32 general.alignment key
              is appended.
    pad_last  pad the data after the last tensor to the alignment (writers
              do); False ends the file right after the last tensor's bytes.

    Tensor offsets: each is align_up(previous offset + previous nbytes).  The
    data section starts at align_up(end of tensor infos); with 0 tensors there
    is no padding at all (§1.6).
    """
    items = _norm_kv(kv)
    if (alignment != 32 and add_alignment_key
            and not any(k == "general.alignment" for k, _, _ in items)):
        items.append(("general.alignment", 4, alignment))
    w = _W(version, big_endian)
    w.out += b"GGUF"
    w.p("I", version)
    w.count(len(tensors))
    w.count(len(items))
    for k, t, v in items:
        w.string(k)
        w.p("I", t)
        w.value(t, v)
    datas, off = [], 0
    for tinfo in tensors:
        name, dims, gt = tinfo[0], list(tinfo[1]), _ggml_type_id(tinfo[2])
        data = tinfo[3] if len(tinfo) > 3 else None
        if data is None:
            data = det_bytes(gguf_nbytes(dims, gt), name)
        toff = tinfo[4] if len(tinfo) > 4 else off
        w.string(name)
        w.p("I", len(dims))
        for d in dims:
            w.count(d)
        w.p("I", gt)
        w.p("Q", toff)
        datas.append((toff, data))
        off = _align_up(toff + len(data), alignment)
    if not tensors:
        return bytes(w.out)
    out = w.out
    out += b"\0" * (_align_up(len(out), alignment) - len(out))
    start = len(out)
    for toff, data in datas:
        pos = start + toff
        if len(out) < pos:
            out += b"\0" * (pos - len(out))
        out[pos:pos + len(data)] = data
    if pad_last:
        out += b"\0" * (_align_up(len(out) - start, alignment)
                        - (len(out) - start))
    return bytes(out)


class _R:
    def __init__(self, data):
        self.d, self.o = data, 0

    def get(self, fmt):
        v = struct.unpack_from(self.e + fmt, self.d, self.o)
        self.o += struct.calcsize(fmt)
        return v[0]

    def count(self):
        return self.get(self.cnt)

    def string(self):
        n = self.count()
        if self.o + n > len(self.d):
            raise ValueError("string past end of file")
        s = self.d[self.o:self.o + n]
        self.o += n
        return s.decode("utf-8", "surrogateescape")

    def value(self, t, depth=0):
        if t in _SCALAR_FMT:
            v = self.get(_SCALAR_FMT[t])
            return bool(v) if t == 7 else v
        if t == 8:
            return self.string()
        if t == 9:
            if depth > 2:
                raise ValueError("nested arrays too deep")
            et = self.get("I")
            n = self.count()
            if n > len(self.d):
                raise ValueError("array count too large")
            return (et, [self.value(et, depth + 1) for _ in range(n)])
        raise ValueError("bad GGUF value type %d" % t)


def read_gguf(data):
    """Parse a GGUF (any of v1-v3, LE or BE).  Returns a dict with keys
    version, big_endian, kv ({key: (type_id, value)}, arrays as
    (elem_type, list)), tensors ([(name, dims, ggml_type, offset)]),
    alignment, header_end (end of tensor infos), data_start, and
    param_count.  Raises ValueError/struct.error on malformed input."""
    if data[:4] != b"GGUF":
        raise ValueError("bad magic %r" % data[:4])
    r = _R(data)
    r.o = 4
    r.e = "<"
    version = r.get("I")
    big = False
    if version & 0xFFFF == 0:
        big = True
        r.e = ">"
        r.o = 4
        version = r.get("I")
    r.cnt = "I" if version == 1 else "Q"
    nt, nkv = r.count(), r.count()
    kv = {}
    for _ in range(nkv):
        k = r.string()
        t = r.get("I")
        kv[k] = (t, r.value(t))
    tensors = []
    for _ in range(nt):
        name = r.string()
        nd = r.get("I")
        if nd > 8:
            raise ValueError("n_dims too large")
        dims = [r.count() for _ in range(nd)]
        tensors.append((name, dims, r.get("I"), r.get("Q")))
    align = 32
    if "general.alignment" in kv and kv["general.alignment"][0] == 4:
        align = kv["general.alignment"][1] or 32
    header_end = r.o
    data_start = _align_up(header_end, align) if nt else header_end
    pc = 0
    for _, dims, _, _ in tensors:
        pc += math.prod(dims) if dims else 1
    return {"version": version, "big_endian": big, "kv": kv,
            "tensors": tensors, "alignment": align, "header_end": header_end,
            "data_start": data_start, "param_count": pc}


def gguf_param_count(data):
    """Ollama's parameter count for a GGUF: sum over tensors of prod(dims)."""
    return read_gguf(data)["param_count"]


# --------------------------------------------------------------------------
# safetensors (store spec §6)
# --------------------------------------------------------------------------

ST_DTYPE_SIZES = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1,
    "U16": 2, "I16": 2, "F16": 2, "BF16": 2, "U32": 4, "I32": 4, "F32": 4,
    "U64": 8, "I64": 8, "F64": 8,
}


def safetensors_bytes(tensors, metadata=None, pad=True):
    """Return a safetensors file: [u64 LE header length][JSON header][data].

    tensors   {name: (dtype, shape, data_bytes_or_None)}; data is laid out in
              the dict's order with sequential data_offsets; None means a
              deterministic filler of prod(shape) * dtype size bytes.
    metadata  None: no __metadata__ key (Go writer); 'null': JSON null (MLX
              writer with no metadata); a dict: an object (values str()ed).
    pad       pad the header with spaces to a multiple of 8 (Go writer); the
              MLX writer does not pad (pad=False).
    The header is compact JSON with sorted keys.
    """
    header, blobs, off = {}, [], 0
    for name, (dtype, shape, data) in tensors.items():
        if data is None:
            n = ST_DTYPE_SIZES[dtype] * math.prod(shape)
            data = det_bytes(n, name)
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    if metadata == "null":
        header["__metadata__"] = None
    elif metadata is not None:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    h = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    if pad:
        h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def read_safetensors(data):
    """Parse a safetensors blob; returns (header_dict, data_start).  Checks
    that 8 + header_len + max(end offset) == len(data)."""
    (n,) = struct.unpack_from("<Q", data, 0)
    if 8 + n > len(data):
        raise ValueError("header past end of file")
    header = json.loads(data[8:8 + n].decode("utf-8"))
    end = 0
    for k, v in header.items():
        if k == "__metadata__":
            continue
        a, b = v["data_offsets"]
        want = ST_DTYPE_SIZES[v["dtype"]] * math.prod(v["shape"])
        if b - a != want:
            raise ValueError("%s: %d bytes, shape says %d" % (k, b - a, want))
        end = max(end, b)
    if 8 + n + end != len(data):
        raise ValueError("size mismatch: %d vs %d" % (8 + n + end, len(data)))
    return header, 8 + n


# --------------------------------------------------------------------------
# Ollama formatting rules
# --------------------------------------------------------------------------


def _gofmt_f(value, prec):
    # Go's %.Nf and Python's both round the exact binary value half-even.
    return "%.*f" % (prec, value)


def human_bytes(n):
    """format.HumanBytes (decimal units), as printed in ollama list's SIZE."""
    n = int(n)
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            value = n / scale
            break
    else:
        return "%d B" % n
    if value >= 10:
        return "%d %s" % (int(value), unit)
    if value != math.trunc(value):
        return "%s %s" % (_gofmt_f(value, 1), unit)
    return "%d %s" % (int(value), unit)


def human_number(n):
    """format.HumanNumber (config model_type / parameter_size)."""
    n = int(n)
    if n >= 1_000_000_000:
        x = n / 1e9
        return _gofmt_f(x, 0 if x == math.floor(x) else 1) + "B"
    if n >= 1_000_000:
        x = n / 1e6
        return _gofmt_f(x, 0 if x == math.floor(x) else 2) + "M"
    if n >= 1_000:
        return _gofmt_f(n / 1e3, 0) + "K"
    return str(n)


def go_json(obj, newline=False, sort_keys=False, escape_html=True):
    """Bytes as Go's encoding/json writes them: compact, UTF-8 kept, and (by
    default) <, >, & and U+2028/U+2029 escaped as \\u003c etc.  Keys keep the
    dict's order unless sort_keys (Go sorts map keys).  newline=True gives
    json.Encoder output (a final "\\n"); False gives json.Marshal output."""
    s = json.dumps(obj, ensure_ascii=False, separators=(",", ":"),
                   sort_keys=sort_keys)
    if escape_html:
        s = (s.replace("<", "\\u003c").replace(">", "\\u003e")
             .replace("&", "\\u0026"))
    s = s.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return s.encode("utf-8") + (b"\n" if newline else b"")


def decoder_boundaries(limit):
    """Cumulative read boundaries of Go's json.Decoder: 512, 1536, 3584, ...
    (each 2*prev+512), up to the first one >= limit."""
    b, out = 512, []
    while True:
        out.append(b)
        if b >= limit:
            return out
        b = 2 * b + 512


def _top_value_end(data):
    """1-based offset of the last byte of the first top-level JSON value
    (for an object: its closing '}'), or None if it never completes."""
    i, n = 0, len(data)
    while i < n and data[i] in b" \t\r\n":
        i += 1
    if i >= n:
        return None
    if data[i] not in b"{[":
        return None  # scalar top level: not a manifest, hash everything
    depth, in_str, esc = 0, False, False
    while i < n:
        c = data[i]
        if in_str:
            if esc:
                esc = False
            elif c == 0x5C:
                esc = True
            elif c == 0x22:
                in_str = False
        elif c == 0x22:
            in_str = True
        elif c in b"{[":
            depth += 1
        elif c in b"}]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def manifest_id(data, full=False):
    """The ID ollama list prints for a manifest file's bytes (store spec
    §4.1): sha256 of the bytes json.Decoder pulled in, i.e. of the first
    min(N, smallest boundary >= P) bytes, where P is the 1-based offset of
    the top-level closing '}'.  Returns the first 12 hex digits, or the full
    64-hex digest when full=True.  Incomplete JSON: sha256 of the whole file.
    """
    p = _top_value_end(data)
    n = len(data)
    if p is not None:
        n = min(n, decoder_boundaries(p)[-1])
    h = hashlib.sha256(data[:n]).hexdigest()
    return h if full else h[:12]


def manifest_size(data):
    """Manifest.Size(): config.size + sum of every layer's size (duplicates
    counted each time)."""
    m = json.loads(data) if isinstance(data, (bytes, str)) else data
    total = int((m.get("config") or {}).get("size") or 0)
    for layer in m.get("layers") or []:
        total += int(layer.get("size") or 0)
    return total


def parse_name(name):
    """'llama3.2' / 'user/model:tag' / 'hf.co/org/repo:Q4_K_M' ->
    (host, namespace, model, tag) with defaults registry.ollama.ai, library,
    latest.  The tag is taken from the last path segment only, so a host
    with a port ('localhost:5000/ns/m') works."""
    parts = name.split("/")
    last = parts[-1]
    model, sep, tag = last.rpartition(":")
    if not sep:
        model, tag = last, "latest"
    host, ns = "registry.ollama.ai", "library"
    if len(parts) == 2:
        ns = parts[0]
    elif len(parts) == 3:
        host, ns = parts[0], parts[1]
    elif len(parts) != 1:
        raise ValueError("bad model name %r" % name)
    return host, ns, model, tag


def v2_host(host):
    """The host directory of a manifests-v2 path (spec §2.5): the default
    registry is canonicalised to ollama.com, ':' is written %3A."""
    if host.lower() in ("registry.ollama.ai", "ollama.com"):
        host = "ollama.com"
    return host.replace(":", "%3A")


def display_shortest(host, ns, model, tag):
    """Name.DisplayShortest(): what ollama list prints as NAME."""
    if host.lower() != "registry.ollama.ai":
        return "%s/%s/%s:%s" % (host, ns, model, tag)
    if ns.lower() != "library":
        return "%s/%s:%s" % (ns, model, tag)
    return "%s:%s" % (model, tag)


_CONFIG_V2_FIELDS = [  # (json key, omitempty), in Go's ConfigV2 order (§3)
    ("model_format", False), ("model_family", False),
    ("model_families", False), ("model_type", False), ("file_type", False),
    ("renderer", True), ("parser", True), ("requires", True),
    ("remote_host", True), ("remote_model", True), ("capabilities", True),
    ("context_length", True), ("embedding_length", True),
    ("base_name", True), ("draft", True), ("architecture", False),
    ("os", False), ("rootfs", False),
]


def config_v2(rootfs=False, **fields):
    """A ConfigV2 dict in Go's serialisation order.  Non-omitempty fields
    default to "" (model_families to None = JSON null); omitempty ones are
    dropped when empty.  rootfs=False leaves rootfs out (Ollama >= v0.32.7);
    pass a dict (e.g. {"type": "layers", "diff_ids": [...]}) to include it.
    Unknown keyword fields are appended at the end in the given order."""
    out = {}
    known = {k for k, _ in _CONFIG_V2_FIELDS}
    for key, omitempty in _CONFIG_V2_FIELDS:
        if key == "rootfs":
            if rootfs is not False:
                out["rootfs"] = rootfs
            continue
        if key in fields:
            v = fields[key]
            if omitempty and v in ("", None, 0, [], {}):
                continue
            out[key] = v
        elif not omitempty:
            out[key] = None if key == "model_families" else ""
    for k, v in fields.items():
        if k not in known:
            out[k] = v
    return out


# --------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------


class Store:
    """An Ollama model store rooted at ``root`` (what OLLAMA_MODELS names).

    Store(root) creates root/manifests and root/blobs (mode 0755).  Paths
    given to helpers as ``relpath`` are relative to root.
    """

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.manifests = os.path.join(self.root, "manifests")
        self.blobs = os.path.join(self.root, "blobs")
        for d in (self.manifests, self.blobs):
            os.makedirs(d, exist_ok=True)
            os.chmod(d, 0o755)

    # -- paths --------------------------------------------------------------
    def path(self, relpath):
        return relpath if os.path.isabs(relpath) else os.path.join(
            self.root, relpath)

    def blob_path(self, digest):
        """blobs/sha256-<hex> for 'sha256:<hex>' (or 'sha256-<hex>')."""
        return os.path.join(self.blobs, digest.replace(":", "-"))

    def manifest_path(self, name):
        return os.path.join(self.manifests, *parse_name(name))

    # -- blobs and layers ---------------------------------------------------
    def add_blob(self, data, mtime=None):
        """Write blobs/sha256-<sha256(data)> (mode 0644); return 'sha256:<hex>'."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        hexd = hashlib.sha256(data).hexdigest()
        p = os.path.join(self.blobs, "sha256-" + hexd)
        with open(p, "wb") as f:
            f.write(data)
        os.chmod(p, 0o644)
        if mtime is not None:
            os.utime(p, (mtime, mtime))
        return "sha256:" + hexd

    def layer(self, media, data, name=None, from_=None):
        """Add a blob and return its manifest layer dict, keys in the order
        mediaType, digest, size[, from][, name].  ``media`` is a suffix
        ('model', 'template', 'image.tensor' ...) or a full media type (one
        containing '/').  str data is UTF-8 encoded."""
        if "/" not in media:
            if media.startswith("image."):
                media = media[len("image."):]
            media = MEDIA_PREFIX + media
        if isinstance(data, str):
            data = data.encode("utf-8")
        d = {"mediaType": media, "digest": self.add_blob(data),
             "size": len(data)}
        if from_:
            d["from"] = from_
        if name:
            d["name"] = name
        return d

    def config(self, cfg, newline=True):
        """Write a config blob as Go writes it (compact, keys in the given
        order, <>& escaped) and return its layer dict.  newline=True is the
        server's json.Encoder form; False is json.Marshal (MLX client)."""
        data = go_json(cfg, newline=newline)
        return {"mediaType": MT_CONFIG, "digest": self.add_blob(data),
                "size": len(data)}

    # -- manifests ----------------------------------------------------------
    @staticmethod
    def manifest_bytes(config_layer, layers, style="local", extra=None):
        """Manifest bytes.  style 'registry': keys schemaVersion, mediaType,
        config, layers, no final newline, no HTML escaping; 'local':
        json.Encoder form (compact, <>& escaped, final newline).  Layer keys
        keep the order of the dicts given (layer() produces mediaType,
        digest, size, from, name).  config_layer None = empty config
        ({"mediaType":...,"digest":"","size":0}).  extra: dict of additional
        top-level keys appended at the end."""
        if config_layer is None:
            config_layer = {"mediaType": MT_CONFIG, "digest": "", "size": 0}
        m = {"schemaVersion": 2, "mediaType": MT_MANIFEST,
             "config": config_layer, "layers": list(layers)}
        if extra:
            m.update(extra)
        if style == "registry":
            return go_json(m, newline=False, escape_html=False)
        if style == "local":
            return go_json(m, newline=True)
        raise ValueError("style must be 'local' or 'registry'")

    def add_manifest(self, name, config_layer, layers, style="local",
                     mtime=None, extra=None):
        """Write manifests/<host>/<ns>/<model>/<tag> (see parse_name) and
        return (path, bytes).  See manifest_bytes for style/extra."""
        data = self.manifest_bytes(config_layer, layers, style, extra)
        p = self.manifest_path(name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        os.chmod(p, 0o644)
        if mtime is not None:
            os.utime(p, (mtime, mtime))
        return p, data

    # -- 0.40 stores: manifest blobs, lists, manifests-v2 tags (spec §2.5) --
    def add_manifest_blob(self, config_layer, layers, runner=None, fmt=None,
                          style="registry", extra=None):
        """A manifest stored as blobs/sha256-<sha of its bytes>, with the
        optional top-level "runner" and "format" of 0.40.  Returns
        (digest, bytes)."""
        ex = {}
        if runner is not None:
            ex["runner"] = runner
        if fmt is not None:
            ex["format"] = fmt
        ex.update(extra or {})
        data = self.manifest_bytes(config_layer, layers, style, ex or None)
        return self.add_blob(data), data

    def add_list_blob(self, children, style="registry"):
        """A manifest list blob.  ``children`` are dicts such as
        {"digest": d, "runner": "mlx", "format": "safetensors"}; each gets
        the manifest mediaType first.  Returns (digest, bytes)."""
        entries = []
        for c in children:
            e = {"mediaType": MT_MANIFEST}
            e.update(c)
            entries.append(e)
        m = {"schemaVersion": 2, "mediaType": MT_MANIFEST_LIST,
             "manifests": entries}
        data = go_json(m, newline=(style == "local"),
                       escape_html=(style == "local"))
        return self.add_blob(data), data

    def v2_tag_path(self, name):
        """manifests-v2/<host>/<ns>/<model>/<tag>, host canonicalised."""
        host, ns, model, tag = parse_name(name)
        return os.path.join(self.root, "manifests-v2", v2_host(host), ns,
                            model, tag)

    def add_v2_tag(self, name, digest, how="symlink", mtime=None):
        """Point the manifests-v2 tag of ``name`` at the manifest blob
        ``digest``: a relative symlink, a hard link or a copy, as 0.40
        writes it.  Returns the tag path."""
        p = self.v2_tag_path(name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if os.path.lexists(p):
            os.remove(p)
        blob = self.blob_path(digest)
        if how == "symlink":
            os.symlink(os.path.relpath(blob, os.path.dirname(p)), p)
        elif how == "hardlink":
            os.link(blob, p)
        elif how == "copy":
            with open(blob, "rb") as f:
                data = f.read()
            with open(p, "wb") as f:
                f.write(data)
            os.chmod(p, 0o644)
        else:
            raise ValueError("how must be symlink, hardlink or copy")
        if mtime is not None:
            os.utime(p, (mtime, mtime), follow_symlinks=False)
        return p

    # -- raw files, junk, times -------------------------------------------
    def write_raw(self, relpath, data, mode=0o644, mtime=None):
        """Write any file under root (parents created); return its path."""
        p = self.path(relpath)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if isinstance(data, str):
            data = data.encode("utf-8")
        with open(p, "wb") as f:
            f.write(data)
        if mode is not None:
            os.chmod(p, mode)
        if mtime is not None:
            os.utime(p, (mtime, mtime))
        return p

    def partial_download(self, data, n_parts=2, completed=0.5, mtime=None):
        """An interrupted pull of a blob whose full content is ``data``
        (store spec §1.3): blobs/sha256-<hex>-partial, a sparse file
        truncated to len(data) holding the first ``completed`` fraction of
        each part, plus blobs/sha256-<hex>-partial-<N> JSON files
        {"N":..,"Offset":..,"Size":..,"Completed":..}\\n.  ``completed`` is a
        fraction or a list of per-part fractions.  Returns (digest, paths)."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        hexd = hashlib.sha256(data).hexdigest()
        base = os.path.join(self.blobs, "sha256-%s-partial" % hexd)
        total = len(data)
        fr = completed if isinstance(completed, (list, tuple)) else \
            [completed] * n_parts
        size = -(-total // n_parts)
        paths = [base]
        with open(base, "wb") as f:
            f.truncate(total)
            for i in range(n_parts):
                off = i * size
                psize = max(0, min(size, total - off))
                done = int(psize * fr[i])
                if done:
                    f.seek(off)
                    f.write(data[off:off + done])
                part = {"N": i, "Offset": off, "Size": psize,
                        "Completed": done}
                pp = "%s-%d" % (base, i)
                with open(pp, "wb") as pf:
                    pf.write(go_json(part, newline=True))
                paths.append(pp)
        for p in paths:
            os.chmod(p, 0o644)
            if mtime is not None:
                os.utime(p, (mtime, mtime))
        return "sha256:" + hexd, paths

    def create_temp(self, digits="1234567890", data=b"", mtime=None):
        """A crashed NewLayer temp file: blobs/sha256-<decimal digits>."""
        return self.write_raw(os.path.join("blobs", "sha256-" + str(digits)),
                              data, mtime=mtime)

    def tmp_download(self, data, keep=None, mtime=None):
        """An interrupted tensor-model pull: blobs/sha256-<hex>.tmp holding
        the first ``keep`` bytes (default half) of ``data``."""
        hexd = hashlib.sha256(data).hexdigest()
        keep = len(data) // 2 if keep is None else keep
        return self.write_raw(os.path.join("blobs", "sha256-%s.tmp" % hexd),
                              data[:keep], mtime=mtime)

    def symlink(self, relpath, target):
        """Create a symlink at root/relpath pointing at target (verbatim)."""
        p = self.path(relpath)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if os.path.lexists(p):
            os.remove(p)
        os.symlink(target, p)
        return p

    def mkdir(self, relpath):
        p = self.path(relpath)
        os.makedirs(p, exist_ok=True)
        return p

    def set_mtime(self, relpath, t):
        """Set atime and mtime (Unix seconds) of root/relpath (or an abs path)."""
        os.utime(self.path(relpath), (t, t), follow_symlinks=False)

    def age(self, relpath, seconds, now=None):
        """Make root/relpath ``seconds`` old (e.g. 7200 to pass the 1 h
        prune grace period)."""
        import time
        t = (time.time() if now is None else now) - seconds
        self.set_mtime(relpath, t)

    def age_all(self, seconds, now=None):
        """Make every file under root ``seconds`` old."""
        for d, _, files in os.walk(self.root):
            for f in files:
                self.age(os.path.join(d, f), seconds, now)


# --------------------------------------------------------------------------
# Model builders
# --------------------------------------------------------------------------

# file_type -> (main weight type, "sensitive" weight type: attn_v, output)
_FT_WEIGHTS = {
    0: ("f32", "f32"), 1: ("f16", "f16"), 2: ("q4_0", "q4_0"),
    3: ("q4_1", "q4_1"), 7: ("q8_0", "q8_0"), 8: ("q5_0", "q5_0"),
    9: ("q5_1", "q5_1"), 10: ("q2_K", "q4_K"), 11: ("q3_K", "q5_K"),
    12: ("q3_K", "q5_K"), 13: ("q3_K", "q5_K"), 14: ("q4_K", "q5_K"),
    15: ("q4_K", "q6_K"), 16: ("q5_K", "q6_K"), 17: ("q5_K", "q6_K"),
    18: ("q6_K", "q6_K"), 32: ("bf16", "bf16"),
}


def tiny_llama_gguf(arch="llama", file_type=15, n_layers=2, name=None,
                    n_embd=256, n_vocab=32, rows=16, context_length=4096,
                    n_head=4, n_head_kv=1, pooling_type=None,
                    vision_block_count=None, extra_kv=None, version=3,
                    big_endian=False, alignment=32, general_type="model"):
    """A small but realistic GGUF language model.

    KV: general.architecture, general.type, general.name, general.file_type
    (u32), general.quantization_version, <arch>.context_length,
    .embedding_length, .block_count, .feed_forward_length,
    .attention.head_count[_kv], [.pooling_type] [.vision.block_count],
    tokenizer.ggml.model, .tokens (string array), .scores (f32 array),
    .token_type (i32 array), .bos/eos_token_id, plus extra_kv (a dict; its
    keys override).  Tensors: token_embd.weight [n_embd, n_vocab], per layer
    attn_norm (f32), attn_q, attn_k, attn_v, ffn_down (the matrices are
    shrunk to [n_embd, rows] to keep files tiny), output_norm (f32),
    output.weight.  Weight types follow file_type (15 = Q4_K_M: q4_K with
    q6_K for attn_v/ffn_down/output; 1 = F16; 2 = Q4_0; 7 = Q8_0 ...).
    n_embd must be a multiple of the block size of those types (256 for
    k-quants, 32 for q4_0/q8_0).
    """
    main, sens = _FT_WEIGHTS.get(file_type, ("q4_K", "q6_K"))
    tokens = ["<unk>", "<s>", "</s>"] + ["tok%d" % i for i in range(n_vocab - 3)]
    kv = [
        ("general.architecture", "str", arch),
        ("general.type", "str", general_type),
        ("general.name", "str", name or ("Tiny %s demo" % arch)),
        ("general.file_type", "u32", file_type),
        ("general.quantization_version", "u32", 2),
        ("%s.context_length" % arch, "u32", context_length),
        ("%s.embedding_length" % arch, "u32", n_embd),
        ("%s.block_count" % arch, "u32", n_layers),
        ("%s.feed_forward_length" % arch, "u32", n_embd * 4),
        ("%s.attention.head_count" % arch, "u32", n_head),
        ("%s.attention.head_count_kv" % arch, "u32", n_head_kv),
        ("%s.attention.layer_norm_rms_epsilon" % arch, "f32", 1e-5),
    ]
    if pooling_type is not None:
        kv.append(("%s.pooling_type" % arch, "u32", pooling_type))
    if vision_block_count is not None:
        kv.append(("%s.vision.block_count" % arch, "u32", vision_block_count))
    kv += [
        ("tokenizer.ggml.model", "str", "llama" if arch != "bert" else "bert"),
        ("tokenizer.ggml.tokens", "arr", ("str", tokens)),
        ("tokenizer.ggml.scores", "arr",
         ("f32", [float(-i) for i in range(n_vocab)])),
        ("tokenizer.ggml.token_type", "arr",
         ("i32", [2, 3, 3] + [1] * (n_vocab - 3))),
        ("tokenizer.ggml.bos_token_id", "u32", 1),
        ("tokenizer.ggml.eos_token_id", "u32", 2),
    ]
    if extra_kv:
        over = _norm_kv(extra_kv)
        keys = {k for k, _, _ in over}
        kv = [x for x in _norm_kv(kv) if x[0] not in keys] + over
    tensors = [("token_embd.weight", [n_embd, n_vocab], main)]
    for i in range(n_layers):
        p = "blk.%d." % i
        tensors += [
            (p + "attn_norm.weight", [n_embd], "f32"),
            (p + "attn_q.weight", [n_embd, rows], main),
            (p + "attn_k.weight", [n_embd, rows], main),
            (p + "attn_v.weight", [n_embd, rows], sens),
            (p + "ffn_down.weight", [n_embd, rows], sens),
        ]
    tensors += [("output_norm.weight", [n_embd], "f32"),
                ("output.weight", [n_embd, n_vocab], sens)]
    return gguf_bytes(kv, tensors, version=version, big_endian=big_endian,
                      alignment=alignment)


def tiny_projector_gguf(name="Tiny mmproj demo", block_count=1, n_embd=64,
                        version=3):
    """A clip/mmproj vision projector GGUF: general.architecture clip,
    general.type mmproj, clip.has_vision_encoder true,
    clip.vision.block_count, f16 tensors."""
    kv = [
        ("general.architecture", "str", "clip"),
        ("general.type", "str", "mmproj"),
        ("general.name", "str", name),
        ("general.file_type", "u32", 1),
        ("clip.projector_type", "str", "mlp"),
        ("clip.has_vision_encoder", "bool", True),
        ("clip.has_audio_encoder", "bool", False),
        ("clip.vision.image_size", "u32", 224),
        ("clip.vision.patch_size", "u32", 14),
        ("clip.vision.embedding_length", "u32", n_embd),
        ("clip.vision.feed_forward_length", "u32", n_embd * 4),
        ("clip.vision.projection_dim", "u32", 256),
        ("clip.vision.block_count", "u32", block_count),
        ("clip.vision.attention.head_count", "u32", 4),
        ("clip.vision.image_mean", "arr", ("f32", [0.5, 0.5, 0.5])),
        ("clip.vision.image_std", "arr", ("f32", [0.5, 0.5, 0.5])),
    ]
    tensors = [("v.patch_embd.weight", [14, 14, 3, 8], "f16")]
    for i in range(block_count):
        tensors += [("v.blk.%d.attn_q.weight" % i, [n_embd, 16], "f16"),
                    ("v.blk.%d.ln1.weight" % i, [n_embd], "f32")]
    tensors += [("mm.0.weight", [n_embd, 16], "f16"),
                ("mm.0.bias", [16], "f32")]
    return gguf_bytes(kv, tensors, version=version)


def tiny_adapter_gguf(arch="llama", n_embd=256, rank=4, alpha=8.0,
                      n_layers=1, version=3):
    """A LoRA adapter GGUF: general.type adapter, adapter.type lora,
    adapter.lora.alpha, tensors blk.N.attn_q.weight.lora_a / .lora_b (f32)."""
    kv = [
        ("general.architecture", "str", arch),
        ("general.type", "str", "adapter"),
        ("general.name", "str", "Tiny LoRA demo"),
        ("adapter.type", "str", "lora"),
        ("adapter.lora.alpha", "f32", alpha),
    ]
    tensors = []
    for i in range(n_layers):
        tensors += [("blk.%d.attn_q.weight.lora_a" % i, [n_embd, rank], "f32"),
                    ("blk.%d.attn_q.weight.lora_b" % i, [rank, n_embd], "f32")]
    return gguf_bytes(kv, tensors, version=version)


def gguf_config(store, gguf, layers, model_type=None, file_type=None,
                families=None, rootfs=True, **extra):
    """Write and return the config layer a server-side create would write
    for a GGUF model (store spec §3): model_format gguf, model_family =
    general.architecture, model_families, model_type = HumanNumber(param
    count), file_type = FileType string, architecture amd64, os linux,
    rootfs {type: layers, diff_ids: the layer digests} (rootfs=False omits
    it, as Ollama >= v0.32.7 does).  extra: more ConfigV2 fields."""
    info = read_gguf(gguf)
    arch = info["kv"].get("general.architecture", (8, ""))[1]
    ft = info["kv"].get("general.file_type", (4, None))[1]
    fields = dict(
        model_format="gguf", model_family=arch,
        model_families=families if families is not None else [arch],
        model_type=model_type or human_number(info["param_count"]),
        file_type=file_type or (FILE_TYPES.get(ft, "unknown")
                                if isinstance(ft, int) and ft > 0
                                else "unknown"),
        architecture="amd64", os="linux")
    fields.update(extra)
    rf = False
    if rootfs:
        rf = {"type": "layers", "diff_ids": [l["digest"] for l in layers]}
    return store.config(config_v2(rootfs=rf, **fields))


_QUANT_BITS = {"int4": 4, "int8": 8, "mxfp4": 4, "nvfp4": 4, "mxfp8": 8}


def _quantized(name, logical, quant, group_size, lead=()):
    """safetensors entries for one quantized weight: <name> U32 packed,
    <name>.scale BF16, <name>.bias BF16 (affine int4/int8 only)."""
    out_dim, in_dim = logical
    pack = 32 // _QUANT_BITS[quant]
    lead = list(lead)
    ents = {name: ("U32", lead + [out_dim, in_dim // pack], None),
            name + ".scale": ("BF16", lead + [out_dim, in_dim // group_size],
                              None)}
    if quant in ("int4", "int8"):
        ents[name + ".bias"] = ("BF16",
                                lead + [out_dim, in_dim // group_size], None)
    return ents


def tiny_mlx_model(store, quant="int4", group_size=64, hidden=64, vocab=32,
                   n_experts=2, moe_ff=64, model_type="qwen3_moe",
                   architectures=("Qwen3MoeForCausalLM",),
                   capabilities=("completion",), requires="0.19.0",
                   file_type=None, max_position_embeddings=4096):
    """Add the blobs of a tiny MLX (safetensors) model to ``store`` and
    return (config_layer, layers), ready for
    store.add_manifest(name, cfg, layers, style='local').

    Layers, in MLX create order (store spec §2.3): image.tensor layers for
    the plain tensors sorted by name (model.embed_tokens.weight BF16,
    model.layers.0.input_layernorm.weight BF16, the quantized
    model.layers.0.self_attn.q_proj.weight with .scale/.bias companions and
    __metadata__ quant_type/group_size, model.norm.weight BF16), then one
    packed expert-group blob 'model.layers.0.mlp.experts' (gate/up/down
    stacked [experts, out, in/pack]), then image.json layers config.json and
    tokenizer.json.  Unquantized blobs use the Go writer form (padded, no
    __metadata__); quantized ones the MLX form (unpadded, __metadata__
    present).  quant=None gives an unquantized bf16 model (file_type "").
    The config blob is ConfigV2 via json.Marshal (no final newline):
    model_format safetensors, empty family/type, model_families null,
    file_type, capabilities, requires, empty architecture/os.
    """
    layers = []
    md = {"group_size": str(group_size), "quant_type": quant} if quant else None

    def tensor_layer(lname, ents, quantized):
        data = safetensors_bytes(ents, metadata=md if quantized else None,
                                 pad=not quantized)
        layers.append(store.layer("tensor", data, name=lname))

    def weight(name, logical, lead=()):
        if quant:
            return _quantized(name, logical, quant, group_size, lead)
        return {name: ("BF16", list(lead) + list(logical), None)}

    plain = {
        "model.embed_tokens.weight":
            ({"model.embed_tokens.weight": ("BF16", [vocab, hidden], None)},
             False),
        "model.layers.0.input_layernorm.weight":
            ({"model.layers.0.input_layernorm.weight":
              ("BF16", [hidden], None)}, False),
        "model.layers.0.self_attn.q_proj.weight":
            (weight("model.layers.0.self_attn.q_proj.weight",
                    (hidden, hidden)), bool(quant)),
        "model.norm.weight":
            ({"model.norm.weight": ("BF16", [hidden], None)}, False),
    }
    for lname in sorted(plain):
        ents, q = plain[lname]
        tensor_layer(lname, ents, q)
    prefix = "model.layers.0.mlp.experts"
    group = {}
    for proj, shape in (("gate_proj", (moe_ff, hidden)),
                        ("up_proj", (moe_ff, hidden)),
                        ("down_proj", (hidden, moe_ff))):
        group.update(weight("%s.%s.weight" % (prefix, proj), shape,
                            lead=(n_experts,)))
    tensor_layer(prefix, group, bool(quant))

    cfg_json = {
        "architectures": list(architectures),
        "model_type": model_type,
        "hidden_size": hidden,
        "intermediate_size": moe_ff,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "num_experts": n_experts,
        "vocab_size": vocab,
        "max_position_embeddings": max_position_embeddings,
        "torch_dtype": "bfloat16",
        "tie_word_embeddings": True,
    }
    tok_json = {
        "version": "1.0",
        "model": {"type": "BPE",
                  "vocab": {"tok%d" % i: i for i in range(vocab)},
                  "merges": []},
    }
    layers.append(store.layer("json", json.dumps(cfg_json, indent=2) + "\n",
                              name="config.json"))
    layers.append(store.layer("json", json.dumps(tok_json, indent=2) + "\n",
                              name="tokenizer.json"))
    ft = file_type if file_type is not None else (quant or "")
    cfg = config_v2(model_format="safetensors", model_family="",
                    model_families=None, model_type="", file_type=ft,
                    requires=requires, capabilities=list(capabilities),
                    architecture="", os="")
    return store.config(cfg, newline=False), layers


def mlx_param_count(store, layers):
    """x/server/show.go's parameter count over a manifest's image.tensor
    layers: sum of prod(shape) of the main tensors, the last dim of
    quantized (U32 with a .scale companion) tensors times 32/bits."""
    total = 0
    for l in layers:
        if not l["mediaType"].startswith(MEDIA_PREFIX + "tensor"):
            continue
        with open(store.blob_path(l["digest"]), "rb") as f:
            h, _ = read_safetensors(f.read())
        meta = h.get("__metadata__") or {}
        bits = _QUANT_BITS.get(meta.get("quant_type", ""), 0)
        for k, v in h.items():
            if k == "__metadata__" or k.endswith((".scale", ".bias",
                                                  ".global_scale")):
                continue
            shape = list(v["shape"])
            if bits and (k + ".scale") in h and shape:
                shape[-1] *= 32 // bits
            total += math.prod(shape)
    return total


# --------------------------------------------------------------------------
# Self-test
# --------------------------------------------------------------------------

# (reference file, expected ID, expected SIZE) from the reference README
_REF_MANIFESTS = [
    ("manifest-registry.ollama.ai-library-llama3.2-latest.json",
     "a80c4f17acd5", 2019393189, "2.0 GB"),
    ("manifest-registry.ollama.ai-library-qwen2.5-7b.json",
     "845dbda0ea48", 4683087332, "4.7 GB"),
    ("manifest-registry.ollama.ai-library-llama3.2-vision-latest.json",
     "085a1fdae525", 7901829417, "7.9 GB"),
    ("manifest-registry.ollama.ai-library-smollm2-135m.json",
     "9077fe9d2ae1", 270898672, "270 MB"),
    ("manifest-registry.ollama.ai-library-nomic-embed-text-latest.json",
     "0a109f422b47", 274302450, "274 MB"),
    ("manifest-registry.ollama.ai-library-alfred-latest.json",
     "e46325710c52", 23808463794, "23 GB"),
]


def _reference_dirs():
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.environ.get("OA_SOURCE_DIR") or os.path.join(here, "..", "..")
    dirs = [os.path.join(src, "fixtures", "reference")]
    shared = os.environ.get("OA_SHARED_DIR")
    if shared:
        dirs.append(os.path.join(shared, "reference", "ollama-manifests"))
    dirs += [os.path.join(src, "..", "shared", "reference",
                          "ollama-manifests"),
             "/work/shared/reference/ollama-manifests"]
    return dirs


def _check_gguf_roundtrip(data, kv, tensors, version, big, align,
                          pad_last=True):
    info = read_gguf(data)
    assert info["version"] == version, (info["version"], version)
    assert info["big_endian"] == big
    items = _norm_kv(kv)
    for k, t, v in items:
        rt, rv = info["kv"][k]
        assert rt == t, (k, rt, t)
        if t == 6:
            assert struct.pack("<f", v) == struct.pack("<f", rv), (k, v, rv)
        elif t == 8 and isinstance(v, str):
            assert rv == v, (k, rv, v)
        elif t == 9:
            et = _type_id(v[0])
            assert rv[0] == et and len(rv[1]) == len(v[1]), k
        elif t != 8:
            assert rv == v, (k, rv, v)
    assert len(info["tensors"]) == len(tensors)
    if not tensors:
        assert info["data_start"] == len(data) == info["header_end"]
        return info
    assert info["data_start"] % align == 0
    expect = 0
    for (name, dims, gt, off), t in zip(info["tensors"], tensors):
        assert name == t[0] and dims == list(t[1])
        assert gt == _ggml_type_id(t[2])
        assert off == expect and off % align == 0, (name, off, expect)
        nb = gguf_nbytes(dims, gt)
        pos = info["data_start"] + off
        assert data[pos:pos + nb] == det_bytes(nb, name), name
        expect = _align_up(off + nb, align)
    end = expect if pad_last else off + nb
    assert len(data) == info["data_start"] + end, (len(data), end)
    return info


def selftest(verbose=True):
    """Run all self-checks; raises AssertionError on failure."""
    import tempfile
    log = print if verbose else (lambda *a, **k: None)
    n_checks = 0

    # human_bytes / human_number
    for n, s in [(2019393189, "2.0 GB"), (23808463794, "23 GB"),
                 (274302450, "274 MB"), (999, "999 B"), (0, "0 B"),
                 (1000, "1 KB"), (1500, "1.5 KB"), (4683087332, "4.7 GB"),
                 (7901829417, "7.9 GB"), (270898672, "270 MB"),
                 (10_000_000, "10 MB"), (9_999_999, "10.0 MB"),
                 (2_000_000_000_000, "2 TB"), (1_000_000_000, "1 GB")]:
        assert human_bytes(n) == s, (n, human_bytes(n), s)
        n_checks += 1
    for n, s in [(8_030_261_248, "8.0B"), (4_471_471_360, "4.5B"),
                 (7_000_000_000, "7B"), (136_727_040, "136.73M"),
                 (137_000_000, "137M"), (1_500_000_000_000, "1500B"),
                 (1_234_567_890_123, "1234.6B"),
                 (30_848, "31K"), (999, "999")]:
        assert human_number(n) == s, (n, human_number(n), s)
        n_checks += 1
    log("ok  human_bytes/human_number")

    # go_json
    assert go_json({"a": "<x&y>", "b": [1, None]}) == \
        b'{"a":"\\u003cx\\u0026y\\u003e","b":[1,null]}'
    assert config_v2(model_format="safetensors", file_type="int4",
                     capabilities=["completion"], requires="0.19.0") == {
        "model_format": "safetensors", "model_family": "",
        "model_families": None, "model_type": "", "file_type": "int4",
        "requires": "0.19.0", "capabilities": ["completion"],
        "architecture": "", "os": ""}
    n_checks += 2

    # manifest_id / manifest_size on the reference manifests
    refdir = next((d for d in _reference_dirs() if os.path.isfile(
        os.path.join(d, _REF_MANIFESTS[0][0]))), None)
    if refdir is None:
        log("SKIP reference manifests (not found)")
    else:
        for fn, want_id, want_size, want_h in _REF_MANIFESTS:
            with open(os.path.join(refdir, fn), "rb") as f:
                data = f.read()
            assert manifest_id(data) == want_id, (fn, manifest_id(data))
            assert manifest_id(data, full=True) == \
                hashlib.sha256(data).hexdigest()
            assert manifest_size(data) == want_size, (fn, manifest_size(data))
            assert human_bytes(manifest_size(data)) == want_h
            n_checks += 3
        cfg = os.path.join(refdir, "config-llama3.1-8b-sha256-e711233e.json")
        with open(cfg, "rb") as f:
            cdata = f.read()
        assert hashlib.sha256(cdata).hexdigest().startswith("e711233e")
        assert len(cdata) == 485
        # our Go-encoder config writer reproduces it byte for byte
        assert go_json(json.loads(cdata), newline=True) == cdata
        n_checks += 3
        exp = os.path.join(refdir, "expected.json")
        if os.path.isfile(exp):
            with open(exp) as f:
                ej = json.load(f)
            for m in ej["manifests"]:
                with open(os.path.join(refdir, m["file"]), "rb") as f:
                    data = f.read()
                assert manifest_id(data) == m["id"]
                assert manifest_size(data) == m["size"]
                assert display_shortest(*m["path_parts"]) == m["name"]
                n_checks += 1
        log("ok  manifest_id/manifest_size on reference manifests in %s"
            % os.path.normpath(refdir))

    # decoder-boundary rule
    assert decoder_boundaries(600) == [512, 1536]
    assert decoder_boundaries(1)[-1] == 512
    assert decoder_boundaries(7000)[-1] == 7680

    with tempfile.TemporaryDirectory() as tmp:
        st = Store(os.path.join(tmp, "models"))
        cl = st.config(config_v2(model_format="gguf"))
        # a local manifest of exactly 513 bytes: '}' at 512, '\n' at 513
        pad = 513 - len(st.manifest_bytes(
            cl, [st.layer("model", b"x", from_="a")])) + 1
        layer = st.layer("model", b"x", from_="a" * pad)
        p, data = st.add_manifest("idtest:513", cl, [layer])
        assert len(data) == 513 and data.endswith(b"}\n"), len(data)
        assert manifest_id(data) == hashlib.sha256(data[:512]).hexdigest()[:12]
        assert manifest_id(data) != hashlib.sha256(data).hexdigest()[:12]
        # 514 bytes: '}' at 513 > 512, so the next read (to 1536) takes all
        layer = st.layer("model", b"x", from_="a" * (pad + 1))
        _, d2 = st.add_manifest("idtest:514", cl, [layer])
        assert len(d2) == 514
        assert manifest_id(d2) == hashlib.sha256(d2).hexdigest()[:12]
        # 1537-byte local manifest: '}' at 1536
        layer = st.layer("model", b"x", from_="a" * (pad + 1024))
        _, d3 = st.add_manifest("idtest:1537", cl, [layer])
        assert len(d3) == 1537
        assert manifest_id(d3) == hashlib.sha256(d3[:1536]).hexdigest()[:12]
        # trailing garbage within the same read is hashed
        d4 = b'{"schemaVersion":2}' + b" junk"
        assert manifest_id(d4) == hashlib.sha256(d4).hexdigest()[:12]
        # '}' inside strings does not end the value
        d5 = b'{"a":"}}\\"}"}' + b"\n" * 600
        assert manifest_id(d5) == hashlib.sha256(d5[:512]).hexdigest()[:12]
        n_checks += 8
        log("ok  manifest_id decoder-boundary rule (513/514/1537-byte "
            "local manifests)")

        # names and manifest paths
        for name, parts, disp in [
                ("llama3.2", ("registry.ollama.ai", "library", "llama3.2",
                              "latest"), "llama3.2:latest"),
                ("user/model:tag", ("registry.ollama.ai", "user", "model",
                                    "tag"), "user/model:tag"),
                ("hf.co/org/repo:Q4_K_M", ("hf.co", "org", "repo", "Q4_K_M"),
                 "hf.co/org/repo:Q4_K_M"),
                ("localhost:5000/ns/m", ("localhost:5000", "ns", "m",
                                         "latest"),
                 "localhost:5000/ns/m:latest")]:
            assert parse_name(name) == parts, (name, parse_name(name))
            assert display_shortest(*parts) == disp
            n_checks += 1
        p, data = st.add_manifest("hf.co/org/repo:Q4_K_M", cl, [layer],
                                  style="registry")
        assert p == os.path.join(st.root, "manifests", "hf.co", "org",
                                 "repo", "Q4_K_M")
        assert not data.endswith(b"\n")
        m = json.loads(data)
        assert list(m) == ["schemaVersion", "mediaType", "config", "layers"]
        assert list(m["layers"][0]) == ["mediaType", "digest", "size", "from"]
        assert os.stat(st.blob_path(layer["digest"])).st_mode & 0o777 == 0o644
        tl = st.layer("tensor", b"t", name="w", from_="f")
        assert list(tl) == ["mediaType", "digest", "size", "from", "name"]
        assert tl["mediaType"] == MEDIA_PREFIX + "tensor"
        n_checks += 6

        # partial downloads / temps
        dg, paths = st.partial_download(det_bytes(3000, "p"), n_parts=3,
                                        completed=[1.0, 0.5, 0.0])
        assert os.path.getsize(paths[0]) == 3000 and len(paths) == 4
        part1 = json.loads(open(paths[2], "rb").read())
        assert part1 == {"N": 1, "Offset": 1000, "Size": 1000,
                         "Completed": 500}
        assert open(paths[2], "rb").read().endswith(b"}\n")
        st.create_temp()
        assert os.path.exists(os.path.join(st.blobs, "sha256-1234567890"))
        n_checks += 4
        log("ok  Store layout, manifest styles, partial downloads")

        # MLX model
        cfg, layers = tiny_mlx_model(st)
        craw = open(st.blob_path(cfg["digest"]), "rb").read()
        assert not craw.endswith(b"\n")
        cj = json.loads(craw)
        assert cj["model_format"] == "safetensors" and \
            cj["file_type"] == "int4" and cj["model_families"] is None
        for l in layers:
            raw = open(st.blob_path(l["digest"]), "rb").read()
            assert len(raw) == l["size"]
            if l["mediaType"].endswith(".tensor"):
                h, start = read_safetensors(raw)
                keys = sorted(h)
                hjson = raw[8:start]
                assert hjson.rstrip(b" ") == json.dumps(
                    json.loads(hjson), sort_keys=True,
                    separators=(",", ":")).encode()
                if any(k.endswith(".scale") for k in keys):
                    assert h["__metadata__"] == {"group_size": "64",
                                                 "quant_type": "int4"}
                else:
                    assert "__metadata__" not in h and start % 8 == 0
                n_checks += 1
        names = [l.get("name") for l in layers]
        assert names[-2:] == ["config.json", "tokenizer.json"]
        assert names[-3] == "model.layers.0.mlp.experts"
        assert mlx_param_count(st, layers) == 30848
        n_checks += 3
        log("ok  tiny_mlx_model blobs re-parse (%d layers)" % len(layers))

    # safetensors variants
    for md, pad in [(None, True), ("null", False), ({"k": "v"}, True),
                    ({"k": "v"}, False)]:
        b = safetensors_bytes({"b": ("F32", [3], None), "a": ("BF16", [2, 2],
                                                             None)}, md, pad)
        h, start = read_safetensors(b)
        assert list(h) == sorted(h)
        assert h["b"]["data_offsets"] == [0, 12]
        assert h["a"]["data_offsets"] == [12, 20]
        assert (start % 8 == 0) if pad else True
        if md is None:
            assert "__metadata__" not in h
        elif md == "null":
            assert h["__metadata__"] is None and b"__metadata__\":null" in b
        else:
            assert h["__metadata__"] == md
        n_checks += 1
    log("ok  safetensors_bytes variants re-parse")

    # GGUF: all 13 value types, arrays, every version, both endiannesses
    kv_all = [
        ("t.u8", "u8", 200), ("t.i8", "i8", -5), ("t.u16", "u16", 60000),
        ("t.i16", "i16", -300), ("t.u32", "u32", 4000000000),
        ("t.i32", "i32", -70000), ("t.f32", "f32", 1.5),
        ("t.bool", "bool", True), ("t.str", "str", "héllo"),
        ("t.arr.str", "arr", ("str", ["a", "", "ccc"])),
        ("t.arr.i32", "arr", ("i32", [1, -2, 3])),
        ("t.arr.nested", "arr", ("arr", [("u8", [1, 2]), ("u8", [])])),
        ("t.u64", "u64", 2 ** 40), ("t.i64", "i64", -2 ** 40),
        ("t.f64", "f64", 2.25),
    ]
    tens = [("a.weight", [256, 3], "q4_K"), ("b.weight", [64], "f32"),
            ("c.weight", [32, 2, 2], "q8_0"), ("d.weight", [256, 1], "q6_K")]
    for version in (1, 2, 3):
        for big in (False, True):
            for align in (32, 64, 8):
                kvs = kv_all if version > 1 else \
                    [x for x in kv_all if _type_id(x[1]) < 10]
                b = gguf_bytes(kvs, tens, version=version, big_endian=big,
                               alignment=align)
                assert b[:4] == b"GGUF"
                if big:
                    assert b[4:8] == struct.pack(">I", version)
                kvcheck = list(kvs) + ([("general.alignment", "u32", align)]
                                       if align != 32 else [])
                _check_gguf_roundtrip(b, kvcheck, tens, version, big, align)
                b0 = gguf_bytes(kvs, [], version=version, big_endian=big)
                _check_gguf_roundtrip(b0, kvs, [], version, big, 32)
                n_checks += 2
    assert gguf_nbytes([256, 3], "q4_K") == 3 * 144
    assert gguf_nbytes([32, 2, 2], "q8_0") == 4 * 34
    b = gguf_bytes({"x": 1}, tens, pad_last=False)
    _check_gguf_roundtrip(b, {"x": 1}, tens, 3, False, 32, pad_last=False)
    # dict kv type inference
    inf = read_gguf(gguf_bytes({"s": "x", "n": 3, "neg": -3, "big": 2 ** 33,
                                "f": 0.5, "b": False, "a": ["x", "y"],
                                "ai": [1, 2], "af": [0.5, 1],
                                "t": typed("u64", 7)}))["kv"]
    assert [inf[k][0] for k in ("s", "n", "neg", "big", "f", "b", "a", "ai",
                                "af", "t")] == [8, 4, 5, 10, 6, 7, 9, 9, 9,
                                                10]
    assert inf["a"][1] == (8, ["x", "y"]) and inf["af"][1][0] == 6
    n_checks += 4
    log("ok  gguf_bytes: 13 value types, arrays, v1/v2/v3, LE/BE, "
        "alignments re-parse")

    # builders
    for data, arch in [(tiny_llama_gguf(), "llama"),
                       (tiny_llama_gguf("bert", 1, n_embd=64,
                                        pooling_type=1), "bert"),
                       (tiny_llama_gguf(file_type=2, n_embd=64), "llama"),
                       (tiny_projector_gguf(), "clip"),
                       (tiny_adapter_gguf(), "llama")]:
        info = read_gguf(data)
        assert info["kv"]["general.architecture"][1] == arch
        tl = [(n, d, t) for n, d, t, _ in info["tensors"]]
        _check_gguf_roundtrip(data, [], tl, 3, False, 32)
        n_checks += 1
    info = read_gguf(tiny_llama_gguf())
    assert info["kv"]["tokenizer.ggml.tokens"][1][0] == 8
    assert info["kv"]["general.file_type"] == (4, 15)
    types = {GGML_TYPES[t][0] for _, _, t, _ in info["tensors"]}
    assert types == {"q4_K", "q6_K", "f32"}, types
    pj = read_gguf(tiny_projector_gguf())["kv"]
    assert pj["general.type"][1] == "mmproj"
    assert pj["clip.has_vision_encoder"] == (7, True)
    assert pj["clip.vision.block_count"][1] == 1
    n_checks += 3
    log("ok  tiny_llama_gguf/tiny_projector_gguf/tiny_adapter_gguf re-parse")
    log("selftest passed (%d checks)" % n_checks)
    return n_checks


if __name__ == "__main__":
    if "--selftest" in sys.argv[1:]:
        selftest()
    else:
        print(__doc__)
