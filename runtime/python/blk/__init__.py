"""blk — Python binding of libblkrt, the blk runtime (ctypes; no dependencies).

    import blk, torch
    dev = blk.Device(0)
    mod = dev.load_ptx_file("vector_add.ptx")        # blkc --emit=ptx output
    k = mod.kernel("vector_add")
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    k[blk.cdiv(n, k.consts["BLOCK"]),](x, y, out, n)   # tensors pass data_ptr()

Arguments are matched to the kernel's blk-meta parameters: a pointer
parameter takes any object with data_ptr() (torch tensors, blk.Buffer), one
with __cuda_array_interface__, a raw device address (int) or None (null);
integer parameters take ints; float parameters take floats or ints. libblkrt
checks kinds and ranges and every failure raises blk.Error with its message.

Launches go to a blk.Stream or, with stream=None, to torch's current stream
of the tensors' GPU (the legacy default stream, CUstream 0, unless inside
`with torch.cuda.stream(s)`), or the legacy default stream when no torch
tensor is passed — so blk launches and torch operations are ordered with each
other. A non-default torch.cuda.Stream (anything with .cuda_stream) is adopted
by libblkrt (blkrt_stream_wrap) and launched on.

From source, on any device (libblk.so: the compiler is in the library):

    dev = blk.Device()                  # GPU 0, or the CPU with BLK_DEVICE=cpu
    k = dev.load_source_file(blk.stdlib("softmax.blk"), defines={"BLOCK": 1024}).kernel("softmax")

On the CPU device (the interpreter) pointer arguments are host memory: torch
CPU tensors, numpy arrays (__array_interface__), writable buffer-protocol
objects (array.array, bytearray), blk.Buffer; CUDA tensors are copied to the
host and back around the launch, so BLK_DEVICE=cpu runs a CUDA script
unchanged on the interpreter (like TRITON_INTERPRET=1).

Several GPUs: a kernel launched on tensors of cuda:N runs on GPU N, whatever
device its module was loaded on (the module is loaded there once, from source
compiled for that GPU's arch), on torch's current stream of that device when
no stream is given; Device() is torch's current device when torch is in use.

The library is found through $BLK_LIBBLKRT, then next to this package (the
wheel bundles libblk.so), then in the repository's build*/runtime/
directories, then the system search path; libblk.so before libblkrt.so.
"""
import ctypes
import operator
import os
import re
import struct
import sys
import threading
import weakref
from collections import namedtuple

from . import _ffi
from ._ffi import Error, ARG_PTR, ARG_INT, ARG_FLOAT, DEVICE_CPU, STATUS_NAMES
from ._ffi import (BLKRT_OK, BLKRT_ERR_NO_DRIVER, BLKRT_ERR_NO_DEVICE, BLKRT_ERR_INVALID_HANDLE,  # noqa: F401
                   BLKRT_ERR_INVALID_VALUE, BLKRT_ERR_INVALID_LAUNCH, BLKRT_ERR_META, BLKRT_ERR_NOT_FOUND,
                   BLKRT_ERR_JIT, BLKRT_ERR_PTX_VERSION, BLKRT_ERR_OUT_OF_MEMORY, BLKRT_ERR_NO_COMPILER,
                   BLKRT_ERR_COMPILE, BLKRT_ERR_LAUNCH_FAILED, BLKRT_ERR_UNSUPPORTED, BLKRT_ERR_IO,
                   BLKRT_ERR_DRIVER, BLKRT_ERR_NO_PEER_ACCESS)

__all__ = list(STATUS_NAMES) + ["Error", "Device", "Module", "Kernel", "Buffer", "Stream", "Event", "Graph", "Param",
           "Autotuner",
           "device_count", "gpu", "version", "cdiv", "library_path", "has_compiler", "stdlib", "STATUS_NAMES",
           "DEVICE_CPU", "ProfileRow", "profile_enable", "profile_rows", "profile_table", "profile_reset",
           "do_bench"]

__version__ = "0.1.0"

Param = namedtuple("Param", "name type")


def cdiv(a, b):
    """Ceiling division, for grids: cdiv(n, BLOCK)."""
    return -(-a // b)


def version():
    """libblkrt's version string."""
    return _ffi.lib().blkrt_version().decode()


def library_path():
    """The path of the loaded libblk.so / libblkrt.so."""
    return _ffi.library_path()


def has_compiler():
    """True when the loaded library is libblk.so (the compiler is in it:
    load_source works, the CPU device runs kernels)."""
    return hasattr(_ffi.lib(), "blk_version")


def stdlib(name=""):
    """The path of a stdlib file ("softmax.blk") or, without a name, of the
    stdlib directory: the wheel's copy, else the repository's."""
    here = os.path.dirname(os.path.abspath(__file__))
    for d in (os.environ.get("BLK_STDLIB_DIR"), os.path.join(here, "stdlib"),
              os.path.normpath(os.path.join(here, "..", "..", "..", "stdlib"))):
        if d and os.path.isfile(os.path.join(d, "elementwise.blk")):
            return os.path.join(d, name) if name else d
    raise Error(BLKRT_ERR_IO, "the blk stdlib was not found next to the package or in the repository")


def device_count():
    """GPUs visible to the driver (raises blk.Error BLKRT_ERR_NO_DRIVER without one)."""
    n = ctypes.c_int()
    _ffi.check(_ffi.lib().blkrt_device_count(ctypes.byref(n)))
    return n.value


def _destroy(fn_name, *handles):
    """Finaliser: call a blkrt destructor, ignoring failures (also at exit)."""
    try:
        getattr(_ffi.lib(), fn_name)(*handles)
    except Exception:
        pass


class _Handle:
    """An owned blkrt handle, destroyed by close() or when collected (children
    keep their parents alive, so they always go first)."""
    _handle = None

    _finalizer = None

    def _own(self, handle, destroy, *extra):
        self._handle = handle
        self._destroy_call = (destroy, extra + (handle,))
        self._finalizer = weakref.finalize(self, _destroy, destroy, *extra, handle)

    def close(self):
        """Destroy the handle now (later uses raise BLKRT_ERR_INVALID_HANDLE).
        Raises blk.Error if libblkrt refuses (a device with live modules)."""
        if self._finalizer is not None and self._finalizer.alive:
            fn, args = self._destroy_call
            _ffi.check(getattr(_ffi.lib(), fn)(*args))
            self._finalizer.detach()
        self._handle = None

    @property
    def handle(self):
        """The raw blkrt handle (an int), for other bindings."""
        return self._handle

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---------------------------------------------------------------- devices

DeviceInfo = namedtuple("DeviceInfo", "kind ordinal name sm arch sm_count warp_size max_threads_per_block "
                        "max_grid max_shared_per_block max_shared_optin total_memory driver_version")


def _default_ordinal():
    """BLK_DEVICE: "cpu" (the interpreter), or a GPU ordinal; without it
    torch's current device when torch is loaded and sees a GPU (in a
    torch.distributed process: the one it set), else 0."""
    env = os.environ.get("BLK_DEVICE", "").strip().lower()
    if env == "cpu":
        return DEVICE_CPU
    if env.startswith("cuda:"):
        env = env[5:]
    if env.isdigit():
        return int(env)
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available():
            return torch.cuda.current_device()
    except Exception:  # a torch without CUDA support, or a broken one: not ours to report
        pass
    return 0


_gpus = {}
_gpus_lock = threading.Lock()


def gpu(ordinal):
    """The process's shared blk.Device of GPU `ordinal`, opened on first use
    and kept: where kernels go for tensors of cuda:N that their own module's
    device is not (Module.for_device)."""
    d = _gpus.get(ordinal)
    if d is None:
        with _gpus_lock:
            d = _gpus.get(ordinal)
            if d is None:
                d = _gpus[ordinal] = Device(ordinal)
    return d


class Device(_Handle):
    """A GPU (ordinal 0..count-1) or the CPU interpreter (Device.cpu()).
    Device() is GPU 0 unless BLK_DEVICE says otherwise; BLK_DEVICE=cpu makes
    every Device(...) the CPU interpreter, so an unchanged script runs there."""

    def __init__(self, ordinal=None):
        if ordinal is None or _default_ordinal() == DEVICE_CPU:
            ordinal = _default_ordinal()
        self._foreign = {}
        h = ctypes.c_void_p()
        _ffi.check(_ffi.lib().blkrt_device_open(int(ordinal), ctypes.byref(h)))
        self._own(h.value, "blkrt_device_close")
        raw = _ffi.DeviceInfo()
        _ffi.check(_ffi.lib().blkrt_device_get_info(self._handle, ctypes.byref(raw)))
        self.info = DeviceInfo(
            "cpu" if raw.kind == 1 else "gpu", raw.ordinal, raw.name.decode(errors="replace"), raw.sm,
            raw.arch.decode(), raw.sm_count, raw.warp_size, raw.max_threads_per_block, tuple(raw.max_grid),
            raw.max_shared_per_block, raw.max_shared_optin, raw.total_memory, raw.driver_version)

    @classmethod
    def cpu(cls):
        """The CPU interpreter device (no driver needed; modules from .blk source
        need a compiler registered in the loaded library)."""
        return cls(DEVICE_CPU)

    @property
    def is_cpu(self):
        return self.info.kind == "cpu"

    def __repr__(self):
        return "<blk.Device %s %s %s>" % (self.info.ordinal if not self.is_cpu else "cpu", self.info.name,
                                          self.info.arch)

    def synchronize(self, timeout_ms=None):
        """Wait for all work of this device. With timeout_ms, give up after
        that long: blk.Error BLKRT_ERR_TIMEOUT names the launch not known to
        have finished (the work keeps running; docs/runtime.md)."""
        if timeout_ms is None:
            _ffi.check(_ffi.lib().blkrt_device_synchronize(self._handle))
        else:
            _ffi.check(_ffi.lib().blkrt_device_synchronize_timeout(self._handle, int(timeout_ms)))

    def set_step_limit(self, steps):
        """The CPU device's interpreter budget per launch (0: none; default
        2^30 or $BLK_INTERP_STEPS): a kernel past it fails with a located
        error naming its loop. GPUs: BLKRT_ERR_UNSUPPORTED (use
        synchronize(timeout_ms=...))."""
        _ffi.check(_ffi.lib().blkrt_device_set_step_limit(self._handle, int(steps)))

    def can_access_peer(self, other):
        """True when kernels on this GPU can read and write `other`'s memory
        directly (NVLink or PCIe peer-to-peer)."""
        can = ctypes.c_int()
        _ffi.check(_ffi.lib().blkrt_device_can_access_peer(self._handle, other._handle, ctypes.byref(can)))
        return bool(can.value)

    def enable_peer_access(self, other):
        """Let kernels on this GPU dereference `other`'s memory (one direction;
        again is a no-op). blk.Error BLKRT_ERR_NO_PEER_ACCESS where the two
        cannot reach each other."""
        _ffi.check(_ffi.lib().blkrt_device_enable_peer_access(self._handle, other._handle))

    def close(self):
        for st in list(self._foreign.values()):
            st.close()
        self._foreign.clear()
        _Handle.close(self)

    def _adopt(self, raw):
        """The blkrt stream of a foreign CUstream (kept per device)."""
        st = self._foreign.get(raw)
        if st is None:
            st = self._foreign[raw] = Stream(self, _wrap=raw)
        return st._handle

    # -- modules
    def load_ptx(self, text):
        """PTX text (str or bytes) with blk-meta lines (blkc --emit=ptx)."""
        data = text.encode() if isinstance(text, str) else bytes(text)
        h = ctypes.c_void_p()
        _ffi.check(_ffi.lib().blkrt_module_load_ptx(self._handle, data, len(data), ctypes.byref(h)))
        return Module(self, h.value, data)

    def load_ptx_file(self, path):
        with open(path, "rb") as f:
            return self.load_ptx(f.read())

    def load_cubin(self, image, meta=None):
        """A cubin/fatbin image (bytes) and the text of its blk-meta lines."""
        image = bytes(image)
        m = meta.encode() if isinstance(meta, str) else meta
        h = ctypes.c_void_p()
        _ffi.check(_ffi.lib().blkrt_module_load_cubin(self._handle, image, len(image), m, ctypes.byref(h)))
        return Module(self, h.value, m or b"")

    def load_source(self, source, path=None, defines=None, kernel=None, cache_dir=None):
        """.blk source through the compiler registered in libblkrt (raises
        BLKRT_ERR_NO_COMPILER where none is: plain libblkrt.so has none).
        defines: {"BLOCK": 1024, "EPS": 1e-5, "HAS_POS": True, "ACT": "silu"}."""
        data = source.encode() if isinstance(source, str) else bytes(source)
        opts, keep = _source_options(path, defines, kernel, cache_dir)
        h = ctypes.c_void_p()
        _ffi.check(_ffi.lib().blkrt_module_load_source(self._handle, data, len(data), ctypes.byref(opts),
                                                       ctypes.byref(h)))
        return Module(self, h.value, b"")

    def load_source_file(self, path, **kw):
        with open(path, "rb") as f:
            return self.load_source(f.read(), path=path, **kw)

    def autotuner(self, source, kernel, path=None, defines=None, cache_dir=None):
        """A blk.Autotuner for `kernel` of .blk source text (its @autotune configs)."""
        return Autotuner(self, source, kernel, path=path, defines=defines, cache_dir=cache_dir)

    def autotuner_file(self, path, kernel, **kw):
        with open(path, "rb") as f:
            return Autotuner(self, f.read(), kernel, path=path, **kw)

    # -- memory
    def malloc(self, nbytes):
        """Device memory (host memory on the CPU device) as a blk.Buffer."""
        return Buffer(self, nbytes)

    def stream(self):
        return Stream(self)

    def event(self):
        return Event(self)


def _source_options(path, defines, kernel, cache_dir):
    """blkrt_source_options, and what must stay alive while it is used."""
    defs = list((defines or {}).items())
    arr = (_ffi.Define * max(1, len(defs)))()
    keep = [arr]
    for i, (name, value) in enumerate(defs):
        nb = name.encode()
        keep.append(nb)
        if isinstance(value, str):  # a string const: the -D text "NAME=VALUE" as the name (blkrt.h)
            nb = f"{name}={value}".encode()
            keep.append(nb)
            arr[i] = _ffi.Define(nb, 0, 0, 0.0)
        elif isinstance(value, float):
            arr[i] = _ffi.Define(nb, 1, 0, value)
        else:
            arr[i] = _ffi.Define(nb, 0, int(value), 0.0)
    opts = _ffi.SourceOptions(path.encode() if path else None, arr, len(defs),
                              kernel.encode() if kernel else None,
                              cache_dir.encode() if cache_dir is not None else None)
    return opts, keep


class Buffer(_Handle):
    """blkrt_malloc'd memory. data_ptr() gives its address, so a Buffer is a
    pointer argument like a tensor."""

    def __init__(self, device, nbytes):
        p = ctypes.c_uint64()
        _ffi.check(_ffi.lib().blkrt_malloc(device._handle, int(nbytes), ctypes.byref(p)))
        self.device, self.nbytes = device, int(nbytes)
        self._own(p.value, "blkrt_free", device._handle)
        # the finaliser calls blkrt_free(device, ptr): ptr last, as _own appends it

    def data_ptr(self):
        return self._handle

    def __int__(self):
        return self._handle

    def _check_size(self, n, what):
        if n > self.nbytes:
            raise Error(BLKRT_ERR_INVALID_VALUE, "%s of %d bytes into a buffer of %d bytes" % (what, n, self.nbytes))

    def copy_from_host(self, data, stream=None):
        """Copy bytes / any buffer-protocol object into the start of the buffer
        (synchronous unless a stream is given: then keep data alive until the
        stream reaches the copy)."""
        mv = memoryview(data).cast("B")
        n = mv.nbytes
        self._check_size(n, "a copy")
        if mv.readonly:
            src = bytes(mv)
            addr = ctypes.cast(ctypes.c_char_p(src), ctypes.c_void_p)
        else:
            src = (ctypes.c_char * n).from_buffer(mv) if n else None
            addr = ctypes.addressof(src) if n else None
        self._call("memcpy_htod", stream, self._handle, addr, n)
        return self

    def copy_to_host(self, out=None, nbytes=None):
        """Copy the buffer (or its first nbytes) into a writable buffer-protocol
        object, or return a new bytearray."""
        n = self.nbytes if nbytes is None else int(nbytes)
        if out is None:
            out = bytearray(n)
        mv = memoryview(out).cast("B")
        if mv.nbytes < n:
            raise Error(BLKRT_ERR_INVALID_VALUE, "destination of %d bytes for a copy of %d" % (mv.nbytes, n))
        self._check_size(n, "a copy")
        if n:
            dst = (ctypes.c_char * n).from_buffer(mv)
            _ffi.check(_ffi.lib().blkrt_memcpy_dtoh(self.device._handle, ctypes.addressof(dst), self._handle, n))
        return out

    def fill(self, byte, nbytes=None, stream=None):
        """memset the buffer (or its first nbytes) to a byte value."""
        n = self.nbytes if nbytes is None else int(nbytes)
        self._check_size(n, "a memset")
        self._call("memset", stream, self._handle, int(byte), n)
        return self

    def copy_from(self, src, nbytes=None, stream=None):
        """Device-to-device copy from another Buffer / pointer-like object; a
        Buffer of another GPU is copied peer to peer (stream: of either GPU)."""
        n = self.nbytes if nbytes is None else int(nbytes)
        self._check_size(n, "a copy")
        sp = _pointer_value(src)
        if sp is None or not 0 <= sp < (1 << 64):
            raise Error(BLKRT_ERR_INVALID_VALUE, "copy_from: %r is not a device address" % (src,))
        sd = src.device if isinstance(src, Buffer) else self.device
        if sd.info.ordinal != self.device.info.ordinal and not (sd.is_cpu or self.device.is_cpu):
            # another GPU's memory: a peer copy (direct with peer access, else through the host)
            self._call("memcpy_peer", stream, self._handle, sd._handle, sp, n)
            return self
        self._call("memcpy_dtod", stream, self._handle, sp, n)
        return self

    def _call(self, name, stream, *args):
        """blkrt_NAME(device, *args), or on a stream blkrt_NAME_async(device,
        *args, stream): the copies and the memset, each in both forms."""
        lib = _ffi.lib()
        if stream is None:
            _ffi.check(getattr(lib, "blkrt_" + name)(self.device._handle, *args))
        else:
            _ffi.check(getattr(lib, "blkrt_" + name + "_async")(self.device._handle, *args,
                                                                _stream_handle(stream, self.device)))

    def __repr__(self):
        return "<blk.Buffer %d bytes at 0x%x>" % (self.nbytes, self._handle or 0)


# ---------------------------------------------------------------- streams, events, graphs

class Stream(_Handle):
    """A blkrt stream (created with default flags: it orders with the legacy
    default stream)."""

    def __init__(self, device, _wrap=None):
        h = ctypes.c_void_p()
        if _wrap is None:
            _ffi.check(_ffi.lib().blkrt_stream_create(device._handle, ctypes.byref(h)))
        else:  # a foreign CUstream (Device._adopt): blkrt forgets it, never destroys it
            _ffi.check(_ffi.lib().blkrt_stream_wrap(device._handle, _wrap, ctypes.byref(h)))
        self.device = device
        self._own(h.value, "blkrt_stream_destroy")

    def synchronize(self, timeout_ms=None):
        """Wait for this stream's work; with timeout_ms, as Device.synchronize."""
        if timeout_ms is None:
            _ffi.check(_ffi.lib().blkrt_stream_synchronize(self._handle))
        else:
            _ffi.check(_ffi.lib().blkrt_stream_synchronize_timeout(self.device._handle, self._handle, int(timeout_ms)))

    def begin_capture(self):
        """Start capturing this thread's launches on this stream into a graph."""
        _ffi.check(_ffi.lib().blkrt_graph_begin_capture(self._handle))

    def end_capture(self):
        """End the capture: the instantiated blk.Graph."""
        h = ctypes.c_void_p()
        _ffi.check(_ffi.lib().blkrt_graph_end_capture(self._handle, ctypes.byref(h)))
        return Graph(self, h.value)

    def capture(self):
        """with s.capture() as cap: k[grid](..., stream=s) ... ; then cap.graph.launch()"""
        return _Capture(self)


class _Capture:
    def __init__(self, stream):
        self.stream, self.graph = stream, None

    def __enter__(self):
        self.stream.begin_capture()
        return self

    def __exit__(self, exc_type, *rest):
        try:
            g = self.stream.end_capture()
        except Error:
            if exc_type is None:
                raise
            return False
        if exc_type is None:
            self.graph = g
        else:
            g.close()
        return False


class Graph(_Handle):
    """A captured sequence of launches, replayed by one launch() call. Keep the
    modules its kernels came from alive while it is used (it holds them)."""

    def __init__(self, stream, handle):
        self.device = stream.device
        self._own(handle, "blkrt_graph_destroy")

    def launch(self, stream=None):
        _ffi.check(_ffi.lib().blkrt_graph_launch(self._handle, _stream_handle(stream, self.device)))


class Event(_Handle):
    def __init__(self, device):
        h = ctypes.c_void_p()
        _ffi.check(_ffi.lib().blkrt_event_create(device._handle, ctypes.byref(h)))
        self.device = device
        self._own(h.value, "blkrt_event_destroy")

    def record(self, stream=None):
        _ffi.check(_ffi.lib().blkrt_event_record(self._handle, _stream_handle(stream, self.device)))
        return self

    def synchronize(self):
        _ffi.check(_ffi.lib().blkrt_event_synchronize(self._handle))

    def elapsed_ms(self, end):
        """Milliseconds from this event to `end` (both recorded and complete)."""
        ms = ctypes.c_float()
        _ffi.check(_ffi.lib().blkrt_event_elapsed_ms(self._handle, end._handle, ctypes.byref(ms)))
        return ms.value


def _stream_handle(stream, device=None):
    """None / 0 / a default-stream torch stream → NULL (the legacy default
    stream); a blk.Stream → its handle; a foreign CUstream (a torch.cuda.Stream's
    .cuda_stream, an int) → adopted by libblkrt on `device`. On the CPU device
    work runs when issued: a foreign stream there means the default one."""
    if stream is None:
        return None
    if isinstance(stream, Stream):
        return stream._handle
    raw = getattr(stream, "cuda_stream", stream)  # torch.cuda.Stream
    if isinstance(raw, int) and raw == 0:
        return None
    if not isinstance(raw, int) or device is None:
        raise Error(BLKRT_ERR_INVALID_VALUE, "not a stream: %r (a blk.Stream, a torch.cuda.Stream or a CUstream)"
                    % (stream,))
    if device.is_cpu:
        return None
    on = getattr(getattr(stream, "device", None), "index", None)  # a torch.cuda.Stream knows its device
    if isinstance(on, int) and on != device.info.ordinal:
        raise Error(BLKRT_ERR_INVALID_VALUE, "the stream %r is on cuda:%d, the launch on GPU %d" % (
            stream, on, device.info.ordinal))
    return device._adopt(raw)


_raw_stream = None


def _torch_stream(ordinal):
    """torch's current CUstream of GPU `ordinal` as an int (0: the legacy
    default stream), through the call Triton uses when torch has it."""
    global _raw_stream
    if _raw_stream is None:
        torch = sys.modules.get("torch")
        if torch is None:
            return 0
        f = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
        _raw_stream = f if f is not None else (lambda i: torch.cuda.current_stream(i).cuda_stream)
    return _raw_stream(ordinal)


def _arg_device(args, ptrs):
    """(GPU ordinal, is torch) of the first pointer argument that says where
    it lives: a torch CUDA tensor (get_device), a GPU blk.Buffer, a DLPack
    producer on CUDA (CuPy); (None, False) when none does (ints, host memory,
    __cuda_array_interface__ alone)."""
    n = len(args)
    for i in ptrs:
        if i >= n:
            break
        a = args[i]
        gd = getattr(a, "get_device", None)
        if gd is not None:
            d = gd()  # torch: -1 for a CPU tensor
            if isinstance(d, int) and d >= 0:
                return d, True
            continue
        if type(a) is Buffer:
            if not a.device.is_cpu:
                return a.device.info.ordinal, False
            continue
        dd = getattr(a, "__dlpack_device__", None)
        if dd is not None:
            try:
                t, d = dd()
            except Exception:
                continue
            if t in (_DL_CUDA, _DL_CUDA_MANAGED):
                return int(d), False
    return None, False


def _launch_stream(stream, device, torch_arg):
    """The blkrt stream of a launch on `device`: the given one, else torch's
    current stream of that device when a torch tensor chose it, else the
    legacy default stream (NULL)."""
    if stream is not None:
        return _stream_handle(stream, device)
    if torch_arg:
        raw = _torch_stream(device.info.ordinal)
        if raw:
            return device._adopt(raw)
    return None


# ---------------------------------------------------------------- modules and kernels

_META_RE = re.compile(r"^[ \t]*//[ \t]*blk-meta[ \t]+v1\b(.*)$", re.M)
_FLOAT_TYPES = ("f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2")


def _meta_consts(text):
    """{kernel: [(const name, type)]} from the blk-meta lines of a PTX text."""
    out = {}
    for m in _META_RE.finditer(text.decode("utf-8", "replace") if isinstance(text, bytes) else text):
        fields = m.group(1)
        k = re.search(r"(?:^|\s)kernel=(\S+)", fields)
        c = re.search(r"(?:^|\s)consts=(\S*)", fields)
        if not k or k.group(1) in out:
            continue
        consts = []
        if c and c.group(1):
            for item in c.group(1).split(","):
                parts = item.split(":")
                if len(parts) >= 2:
                    consts.append((parts[0], parts[1]))
        out[k.group(1)] = consts
    return out


class Module(_Handle):
    """Loaded kernels (PTX, cubin or source) on one device; for_device(d)
    gives the same kernels on another."""

    def __init__(self, device, handle, text, root=None):
        self.device = device
        self._root = root
        if root is None:
            self._own(handle, "blkrt_module_unload")
        else:  # a copy on another device: libblkrt unloads it with its root, which it keeps alive
            self._handle = handle
        self._text = text
        self._consts = _meta_consts(text) if text else {}
        self._kernels = {}
        self._copies = {}  # root: GPU ordinal (or "cpu") -> Module

    def for_device(self, device):
        """This module's kernels on `device` (a blk.Device or a GPU ordinal):
        loaded there by the first call (source compiled for that GPU's arch)
        and kept; the module's own device gives the module."""
        root = self._root or self
        if isinstance(device, int):
            device = gpu(device)
        key = "cpu" if device.is_cpu else device.info.ordinal
        if key == ("cpu" if root.device.is_cpu else root.device.info.ordinal):
            return root
        m = root._copies.get(key)
        if m is None:
            if root._handle is None:
                root._closed()
            h = ctypes.c_void_p()
            _ffi.check(_ffi.lib().blkrt_module_for_device(root._handle, device._handle, ctypes.byref(h)))
            m = root._copies[key] = Module(device, h.value, root._text, root=root)
        return m

    def close(self):
        """Unload the module and its copies on other devices (a copy itself
        is unloaded with the module it copies: closing it only forgets it)."""
        if self._root is not None:
            self._root._copies = {k: c for k, c in self._root._copies.items() if c is not self}
            self._handle = None
            return
        for c in self._copies.values():
            c._handle = None
        self._copies.clear()
        _Handle.close(self)

    @property
    def jit_log(self):
        """The driver's JIT info log of the load (ptxas register/spill lines)."""
        p = ctypes.c_char_p()
        _ffi.check(_ffi.lib().blkrt_module_jit_log(self._handle, ctypes.byref(p)))
        return (p.value or b"").decode("utf-8", "replace")

    def _closed(self):
        raise Error(BLKRT_ERR_INVALID_HANDLE, "the module of this kernel was closed")

    def kernel(self, name):
        """The kernel with this blk-meta name (or an unchecked PTX entry)."""
        k = self._kernels.get(name)
        if k is None:
            h = ctypes.c_void_p()
            _ffi.check(_ffi.lib().blkrt_module_kernel(self._handle, name.encode(), ctypes.byref(h)))
            k = self._kernels[name] = Kernel(self, h.value, self._consts.get(name, ()))
        return k

    def __getitem__(self, name):
        return self.kernel(name)


_STRUCTS = {}
_CODE = {ARG_PTR: "i4xQ", ARG_INT: "i4xq", ARG_FLOAT: "i4xd"}


def _struct_for(kinds):
    s = _STRUCTS.get(kinds)
    if s is None:
        s = _STRUCTS[kinds] = struct.Struct("<" + "".join(_CODE[k] for k in kinds))
    return s


def _pointer_value(a):
    """The address of a pointer-like object, or None if it is not one."""
    if a is None:
        return 0
    if isinstance(a, int) and not isinstance(a, bool):
        return a
    dp = getattr(a, "data_ptr", None)
    if dp is not None:
        return dp()
    cai = getattr(a, "__cuda_array_interface__", None)
    if cai is not None:
        return cai["data"][0]
    if getattr(a, "__dlpack__", None) is not None:
        addr, dev = _dlpack_pointer(a)
        if dev in (_DL_CUDA, _DL_CUDA_MANAGED):
            return addr
    return None


class _DLTensor(ctypes.Structure):
    """DLPack's DLTensor (dlpack.h), the head of a DLManagedTensor."""
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("byte_offset", ctypes.c_uint64)]


_DL_CPU, _DL_CUDA, _DL_CUDA_MANAGED = 1, 2, 13
_capsule_pointer = None


def _dlpack_pointer(a):
    """(address, DLPack device type) of an object with __dlpack__ (CuPy, JAX,
    numpy...). The capsule is not consumed: the producer keeps owning the
    memory, as with data_ptr()."""
    global _capsule_pointer
    if _capsule_pointer is None:
        f = ctypes.pythonapi.PyCapsule_GetPointer
        f.restype, f.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        _capsule_pointer = f
    cap = a.__dlpack__()
    t = _DLTensor.from_address(_capsule_pointer(cap, b"dltensor"))
    return (t.data or 0) + t.byte_offset, t.device_type


# element types of host buffers: buffer-protocol format codes (array.array,
# memoryview) and __array_interface__ typestrs without the byte order
_FORMATS = {"f": "f32", "d": "f64", "e": "f16", "b": "i8", "B": "u8", "h": "i16", "H": "u16", "i": "i32",
            "I": "u32", "q": "i64", "Q": "u64", "?": "bool",
            "l": "i%d" % (8 * ctypes.sizeof(ctypes.c_long)), "L": "u%d" % (8 * ctypes.sizeof(ctypes.c_long))}
_TYPESTRS = {"f2": "f16", "f4": "f32", "f8": "f64", "i1": "i8", "i2": "i16", "i4": "i32", "i8": "i64",
             "u1": "u8", "u2": "u16", "u4": "u32", "u8": "u64", "b1": "bool"}


def _host_address(a, keep):
    """(address, blk element type or None) of host memory: __array_interface__
    (numpy), DLPack on the CPU, a buffer-protocol object (writable, or bytes);
    None if a is none of these. keep collects what must live until the launch
    returns."""
    ai = getattr(a, "__array_interface__", None)
    if ai is not None:
        return ai["data"][0], _TYPESTRS.get(ai.get("typestr", "")[1:])
    if getattr(a, "__dlpack__", None) is not None:
        addr, dev = _dlpack_pointer(a)
        if dev == _DL_CPU:
            return addr, None
    try:
        mv = memoryview(a)
    except TypeError:
        return None
    # bytes and bytearray are raw memory, whatever their 'B' format says
    et = None if isinstance(a, (bytes, bytearray)) else _FORMATS.get(mv.format.lstrip("@=<"))
    if mv.nbytes == 0:
        return 0, et
    if mv.readonly:
        if isinstance(a, bytes):
            c = ctypes.c_char_p(a)  # the bytes object's own storage, not a copy
            keep.append(c)
            return ctypes.cast(c, ctypes.c_void_p).value, et
        raise Error(BLKRT_ERR_INVALID_LAUNCH, "a read-only %s cannot be a kernel argument (pass a writable copy)"
                    % type(a).__name__)
    c = (ctypes.c_char * mv.nbytes).from_buffer(mv)
    keep.append(c)
    return ctypes.addressof(c), et


# dtype names of torch (str(torch.float32) == "torch.float32") and numpy/cupy
# ("float32") as blk scalar types, for checking pointer arguments' element types
_DTYPES = {}
for _blk, _names in (("f32", "float32 float"), ("f64", "float64 double"), ("f16", "float16 half"),
                     ("bf16", "bfloat16"), ("i8", "int8"), ("i16", "int16 short"), ("i32", "int32 int"),
                     ("i64", "int64 long"), ("u8", "uint8"), ("u16", "uint16"), ("u32", "uint32"),
                     ("u64", "uint64"), ("bool", "bool"), ("f8e4m3", "float8_e4m3fn"),
                     ("f8e5m2", "float8_e5m2")):
    for _n in _names.split():
        _DTYPES[_n] = _DTYPES["torch." + _n] = _blk
_dtype_cache = {}


def _elem_type(a):
    """The blk scalar type of a tensor-like argument's dtype, or None."""
    dt = getattr(a, "dtype", None)
    if dt is None:
        return None
    try:
        return _dtype_cache[dt]
    except (KeyError, TypeError):
        pass
    name = _DTYPES.get(str(dt))
    try:
        _dtype_cache[dt] = name
    except TypeError:
        pass
    return name


def _classify(a, pkind):
    """(kind, value) of one argument for a parameter of kind pkind. Python ints
    follow the parameter (address, integer or float); other values keep their
    own kind, so a mismatch reaches libblkrt and gets its exact message."""
    t = type(a)
    if t is int:
        if pkind == ARG_FLOAT:
            return ARG_FLOAT, float(a)
        return pkind, a
    if t is float:
        return ARG_FLOAT, a
    if t is bool:
        return ARG_INT, int(a)
    if a is None:
        return ARG_PTR, 0
    p = _pointer_value(a)
    if p is not None:
        return ARG_PTR, p
    try:  # numpy / torch scalars
        i = operator.index(a)
    except TypeError:
        pass
    else:
        return _classify(i, pkind)
    if getattr(type(a), "__float__", None) is not None:  # numpy floats; not str
        return ARG_FLOAT, float(a)
    return None, a


class Kernel:
    """A kernel of a loaded module. kernel[grid](*args, stream=None) launches
    it; .params, .consts, .num_warps describe it. The argument layout is
    computed once here; a launch packs the values with one struct.pack."""

    def __init__(self, module, handle, consts=()):
        self.module, self._handle = module, handle
        info = _ffi.KernelInfo()
        L = _ffi.lib()
        _ffi.check(L.blkrt_kernel_get_info(handle, ctypes.byref(info)))
        self.name = info.name.decode()
        self.checked = bool(info.checked)
        self.num_variants, self.num_warps, self.shared_bytes = info.num_variants, info.num_warps, info.shared_bytes
        params = []
        for i in range(info.num_params if self.checked else 0):
            n, t = ctypes.c_char_p(), ctypes.c_char_p()
            _ffi.check(L.blkrt_kernel_param(handle, i, ctypes.byref(n), ctypes.byref(t)))
            params.append(Param(n.value.decode(), t.value.decode()))
        self.params = tuple(params)
        self.consts = {}
        i = 0
        while self.checked:  # every const of the kernel's blk-meta (PTX or source alike)
            n, t = ctypes.c_char_p(), ctypes.c_char_p()
            if L.blkrt_kernel_const_at(handle, i, ctypes.byref(n), ctypes.byref(t)) != BLKRT_OK:
                break
            self.consts[n.value.decode()] = self.const(n.value.decode(), t.value.decode())
            i += 1
        for cname, ctype in consts:
            if cname not in self.consts:
                self.consts[cname] = self.const(cname, ctype)
        self._cpu = module.device.is_cpu
        # per-parameter argument kind and integer range
        self._pkinds = tuple(ARG_PTR if p.type.startswith("*") else
                             ARG_FLOAT if p.type in _FLOAT_TYPES else ARG_INT for p in self.params)
        self._u64 = tuple(p.type == "u64" for p in self.params)
        self._pointee = tuple(p.type.replace("*const.", "").replace("*const ", "").lstrip("*")
                              if p.type.startswith("*") else None for p in self.params)
        self._struct = _struct_for(self._pkinds)
        self._nparams = len(self.params)
        self._ptrs = tuple(i for i, k in enumerate(self._pkinds) if k == ARG_PTR)
        self._on = {}  # GPU ordinal -> this kernel in the module's copy there

    def _for_ordinal(self, ordinal):
        """This kernel on GPU `ordinal` (its module copied there once)."""
        k = self._on.get(ordinal)
        if k is None:
            k = self._on[ordinal] = self.module.for_device(gpu(ordinal)).kernel(self.name)
            if self._work is not None:
                k.set_work(*self._work)
        return k

    _work = None

    def set_work(self, bytes=0, flops=0):
        """The work one launch does from now on (bytes read + written, flops),
        for the profiler's GB/s and TFLOP/s (blkrt_profile_set_work); copies
        of this kernel on other GPUs get it too."""
        self._work = (float(bytes), float(flops))
        for k in (self,) + tuple(self._on.values()):
            _ffi.check(_ffi.lib().blkrt_profile_set_work(k._handle, self._work[0], self._work[1]))

    def const(self, name, type=None):
        """A const parameter value this kernel was compiled with (BLOCK, ...)."""
        L = _ffi.lib()
        if type in _FLOAT_TYPES:
            v = ctypes.c_double()
            _ffi.check(L.blkrt_kernel_const_float(self._handle, name.encode(), ctypes.byref(v)))
            return v.value
        v = ctypes.c_int64()
        st = L.blkrt_kernel_const_int(self._handle, name.encode(), ctypes.byref(v))
        if st == BLKRT_ERR_INVALID_VALUE and type is None:  # a float const asked without its type
            d = ctypes.c_double()
            _ffi.check(L.blkrt_kernel_const_float(self._handle, name.encode(), ctypes.byref(d)))
            return d.value
        _ffi.check(st)
        return bool(v.value) if type == "bool" else v.value

    def __repr__(self):
        sig = ", ".join("%s: %s" % p for p in self.params)
        return "<blk.Kernel %s(%s) num_warps=%d>" % (self.name, sig, self.num_warps)

    # -- launching
    def _pack_args(self, args):
        n = len(args)
        if n == self._nparams:
            flat = []
            kinds = self._pkinds
            mismatch = False
            for i in range(n):
                a = args[i]
                k, v = _classify(a, kinds[i])
                if k != kinds[i]:
                    mismatch = True
                elif k == ARG_PTR and type(a) is not int and a is not None:
                    et = _elem_type(a)
                    if et is not None and et != self._pointee[i]:
                        raise Error(BLKRT_ERR_INVALID_LAUNCH, "kernel '%s': argument %d '%s' (%s) is a %s tensor" % (
                            self.name, i + 1, self.params[i].name, self.params[i].type, a.dtype))
                elif k == ARG_INT and self._u64[i] and (1 << 63) <= v < (1 << 64):
                    v -= 1 << 64  # u64 takes the bit pattern
                flat.append(k)
                flat.append(v)
            if not mismatch:
                try:
                    return self._struct.pack(*flat), n
                except struct.error:
                    pass  # out of range: found and reported below
        else:
            kinds = self._pkinds + (ARG_INT,) * max(0, n - self._nparams)
        # slow path: the arguments' own kinds (libblkrt then names the mismatch)
        flat, ks = [], []
        for i, a in enumerate(args):
            k, v = _classify(a, kinds[i] if i < len(kinds) else ARG_INT)
            where = "kernel '%s': argument %d%s" % (self.name, i + 1,
                                                    " '%s' (%s)" % self.params[i] if i < self._nparams else "")
            if k is None:
                raise Error(BLKRT_ERR_INVALID_LAUNCH, "%s: cannot pass a %s" % (where, type(a).__name__))
            if k == ARG_PTR and not (0 <= v < (1 << 64)):
                raise Error(BLKRT_ERR_INVALID_LAUNCH, "%s: %d is not a device address" % (where, v))
            if k == ARG_INT:
                if i < self._nparams and self._u64[i] and (1 << 63) <= v < (1 << 64):
                    v -= 1 << 64
                if not (-(1 << 63) <= v < (1 << 63)):
                    raise Error(BLKRT_ERR_INVALID_LAUNCH, "%s: %d is out of range" % (where, v))
            ks.append(k)
            flat.append(k)
            flat.append(v)
        return _struct_for(tuple(ks)).pack(*flat), n

    def _grid(self, grid):
        if callable(grid):
            grid = grid(self.consts)
        if isinstance(grid, int):
            grid = (grid,)
        g = tuple(grid) + (1,) * (3 - len(grid))
        if len(g) != 3:
            raise Error(BLKRT_ERR_INVALID_LAUNCH, "kernel '%s': a grid has 1 to 3 dimensions, got %d" % (self.name, len(grid)))
        try:
            return struct.pack("<3I", *g)
        except struct.error:
            raise Error(BLKRT_ERR_INVALID_LAUNCH, "kernel '%s': grid %r is out of range (each dimension 1..2^32-1)" % (self.name, g)) \
                from None

    def launch(self, grid, *args, stream=None):
        """Launch on grid (an int, a 1-3 tuple, or a callable of .consts)."""
        self[grid](*args, stream=stream)

    def _host_args(self, args, keep, back):
        """CPU device: pointer arguments as host addresses. CUDA tensors are
        copied to the host (and back after the launch: `back`)."""
        out = list(args)
        for i in range(min(len(args), self._nparams)):
            a = args[i]
            if self._pkinds[i] != ARG_PTR or a is None or type(a) is int:
                continue
            if getattr(a, "is_cuda", False):  # torch CUDA tensor: BLK_DEVICE=cpu on a CUDA script
                host = a.detach().cpu()
                back.append((a, host))
                out[i] = host
                continue
            if getattr(a, "data_ptr", None) is not None:
                continue  # torch CPU tensor, blk.Buffer
            found = _host_address(a, keep)
            if found is None:
                continue  # not host memory: _pack_args names it
            addr, et = found
            if et is not None and et != self._pointee[i]:
                raise Error(BLKRT_ERR_INVALID_LAUNCH, "kernel '%s': argument %d '%s' (%s) holds %s elements" % (
                    self.name, i + 1, self.params[i].name, self.params[i].type, et))
            out[i] = addr
        return tuple(out)

    def __getitem__(self, grid):
        g = self._grid(grid)
        L = _ffi.lib()
        h = self._handle
        pack = self._pack_args
        mod = self.module
        dev = mod.device

        if self._cpu:
            def cpu_launcher(*args, stream=None):
                if mod._handle is None:
                    mod._closed()
                keep, back = [], []
                packed, n = pack(self._host_args(args, keep, back))
                st = L.blkrt_launch(h, g, packed, n, _stream_handle(stream, dev))
                if st:
                    raise Error(st, _ffi.last_error())
                for a, host in back:
                    a.copy_(host)
            return cpu_launcher

        mine, ptrs, on = dev.info.ordinal, self._ptrs, self._on

        def launcher(*args, stream=None):
            # the GPU the arguments live on picks the module copy (and torch's stream there)
            where, from_torch = _arg_device(args, ptrs)
            k = self if where is None or where == mine else (on.get(where) or self._for_ordinal(where))
            if k.module._handle is None:
                k.module._closed()
            packed, n = pack(args)
            s = None if stream is None and not from_torch else _launch_stream(stream, k.module.device, from_torch)
            st = L.blkrt_launch(k._handle, g, packed, n, s)
            if st:
                raise Error(st, _ffi.last_error())
        return launcher

    def max_programs(self, *args):
        """How many programs the device runs at once for a launch with these
        arguments (blkrt_kernel_max_programs: the multiprocessors times the
        programs one holds, for the variant the launch would pick): the grid
        of a persistent kernel. Nothing is launched."""
        L = _ffi.lib()
        keep = []  # host copies made for the CPU device, alive through the call
        if self._cpu:
            args = self._host_args(args, keep, [])
        packed, n = self._pack_args(args)
        out = ctypes.c_uint32()
        _ffi.check(L.blkrt_kernel_max_programs(self._handle, packed, n, ctypes.byref(out)))
        return out.value

    def launch_raw(self, grid, block, params, shared=0, stream=None):
        """cuLaunchKernel-style, no argument checks (GPU only): params is a
        sequence of ctypes values (c_uint64(ptr), c_int32(n), ...)."""
        keep = list(params)
        arr = (ctypes.c_void_p * max(1, len(keep)))(*[ctypes.cast(ctypes.pointer(p), ctypes.c_void_p)
                                                       for p in keep])
        b = tuple(block) + (1,) * (3 - len(tuple(block)))
        _ffi.check(_ffi.lib().blkrt_launch_raw(self._handle, self._grid(grid), struct.pack("<3I", *b),
                                               int(shared), arr, _stream_handle(stream, self.module.device)))


# ---------------------------------------------------------------- the autotuner

def _nbytes(a):
    """Bytes of a pointer argument to save and restore while tuning (0: unknown)."""
    if a is None or isinstance(a, int):
        return 0
    n = getattr(a, "nbytes", None)
    if isinstance(n, int):
        return n
    try:
        return memoryview(a).nbytes
    except TypeError:
        return 0


class Autotuner(_Handle):
    """@autotune(key = [...], configs = [...]) of a kernel from source: one
    compiled kernel per config; the first launch of each key (key parameter
    values + argument divisibility) times every config on that launch's
    arguments and keeps the fastest, in memory and in the cache directory
    (cache_dir, default $BLKRT_CACHE_DIR or ~/.cache/blk; "" = memory only).

        t = dev.autotuner_file("matmul.blk", "matmul")
        t[lambda c: (blk.cdiv(M, c["BM"]), blk.cdiv(N, c["BN"]))](a, b, c, M, N, K)
        t.last_config, t.last_tuned, t.configs

    Launch keywords: restore=True (save the pointer arguments and restore them
    before every timed run and before the real launch, so accumulating
    kernels see one launch), pre_hook / post_hook (callables around each
    timed run), reps (timed runs per config), stream. BLK_AUTOTUNE_VERBOSE=1
    prints each config's time."""

    def __init__(self, device, source, kernel, path=None, defines=None, cache_dir=None):
        data = source.encode() if isinstance(source, str) else bytes(source)
        opts, keep = _source_options(path, defines, None, cache_dir)
        h = ctypes.c_void_p()
        _ffi.check(_ffi.lib().blkrt_autotuner_create(device._handle, data, len(data), ctypes.byref(opts),
                                                     kernel.encode(), ctypes.byref(h)))
        self.device = device
        self._own(h.value, "blkrt_autotuner_destroy")
        n = ctypes.c_int()
        _ffi.check(_ffi.lib().blkrt_autotuner_num_configs(self._handle, ctypes.byref(n)))
        self.configs, self.kernels = [], []
        shim = type("_TunerModule", (), {})()
        shim.device, shim._handle = device, self._handle
        for i in range(n.value):
            text, kh = ctypes.c_char_p(), ctypes.c_void_p()
            _ffi.check(_ffi.lib().blkrt_autotuner_config(self._handle, i, ctypes.byref(text), ctypes.byref(kh)))
            self.configs.append(text.value.decode())
            self.kernels.append(Kernel(shim, kh.value))
        self._by_handle = {k._handle: k for k in self.kernels}
        self.last_config, self.last_tuned = None, None
        self._source = (data, kernel, path, defines, cache_dir)
        self._on = {}  # GPU ordinal -> the tuner of that GPU (its own configs and choices)

    def _for_ordinal(self, ordinal):
        t = self._on.get(ordinal)
        if t is None:
            data, kernel, path, defines, cache_dir = self._source
            t = self._on[ordinal] = Autotuner(gpu(ordinal), data, kernel, path=path, defines=defines,
                                              cache_dir=cache_dir)
        return t

    def close(self):
        """Destroy the tuner and those made for other GPUs."""
        for t in self._on.values():
            t.close()
        self._on.clear()
        _Handle.close(self)

    def __getitem__(self, grid):
        def launcher(*args, stream=None, restore=True, pre_hook=None, post_hook=None, reps=0):
            return self.launch(grid, *args, stream=stream, restore=restore, pre_hook=pre_hook,
                               post_hook=post_hook, reps=reps)
        return launcher

    def launch(self, grid, *args, stream=None, restore=True, pre_hook=None, post_hook=None, reps=0):
        if self._handle is None:
            raise Error(BLKRT_ERR_INVALID_HANDLE, "the autotuner was closed")
        k0 = self.kernels[0]
        where, from_torch = (None, False) if k0._cpu else _arg_device(args, k0._ptrs)
        if where is not None and where != self.device.info.ordinal:
            t = self._for_ordinal(where)
            c = t.launch(grid, *args, stream=stream, restore=restore, pre_hook=pre_hook, post_hook=post_hook,
                         reps=reps)
            self.last_config, self.last_tuned = t.last_config, t.last_tuned
            return c
        keep, back = [], []
        nbytes = [_nbytes(a) if restore and i < k0._nparams and k0._pkinds[i] == ARG_PTR else 0
                  for i, a in enumerate(args)]  # before host arguments become addresses
        if k0._cpu:
            args = k0._host_args(args, keep, back)
        packed, n = k0._pack_args(args)
        failure = []

        def grid_cb(kh, _args, _nargs, out, _user):
            try:
                g = grid
                if callable(g):
                    g = g(self._by_handle[kh].consts)
                if isinstance(g, int):
                    g = (g,)
                g = tuple(g) + (1,) * (3 - len(g))
                out[0], out[1], out[2] = g
            except Exception as e:  # reported after the call: no exception may cross C
                failure.append(e)
                out[0] = out[1] = out[2] = 0

        def hook(fn):
            if fn is None:
                return _ffi.HOOK_FN()
            return _ffi.HOOK_FN(lambda _u: fn())
        sizes = (ctypes.c_size_t * max(1, n))(*nbytes)
        opts = _ffi.AutotuneOptions(sizes, hook(pre_hook), hook(post_hook), None, int(reps))
        gfn = _ffi.GRID_FN(grid_cb)
        config, tuned = ctypes.c_int(-1), ctypes.c_int(0)
        st = _ffi.lib().blkrt_autotuner_launch(self._handle, gfn, None, packed, n, ctypes.byref(opts),
                                               _launch_stream(stream, self.device, from_torch), ctypes.byref(config),
                                               ctypes.byref(tuned))
        if failure:
            raise failure[0]
        _ffi.check(st)
        for a, host in back:
            a.copy_(host)
        self.last_config, self.last_tuned = config.value, bool(tuned.value)
        return config.value


# ---------------------------------------------------------------- profiling

ProfileRow = namedtuple("ProfileRow", "kernel config device launches total_ms median_ms min_ms max_ms bytes flops "
                        "gbps tflops")


def profile_enable(on=True):
    """Time every launch from now on (as BLK_PROFILE=1 does from the start);
    profile_enable(False) stops. Rows stay until profile_reset()."""
    _ffi.check(_ffi.lib().blkrt_profile_enable(1 if on else 0))


def profile_rows():
    """The profiler's rows (blkrt_profile_rows): one ProfileRow per kernel,
    configuration ("BLOCK=4096,w8") and device (GPU ordinal, DEVICE_CPU), in
    the order of their first launch. Waits for timed GPU launches in flight."""
    L = _ffi.lib()
    n = ctypes.c_int(0)
    while True:
        cap = n.value
        rows = (_ffi.ProfileRow * max(1, cap))()
        _ffi.check(L.blkrt_profile_rows(rows if cap else None, cap, ctypes.byref(n)))
        if n.value <= cap:
            break
    return [ProfileRow(r.kernel.decode(), r.config.decode(), r.device, r.launches, r.total_ms, r.median_ms,
                       r.min_ms, r.max_ms, r.bytes, r.flops, r.gbps, r.tflops) for r in rows[:n.value]]


_libc_free = None


def profile_table():
    """The rows as the text table BLK_PROFILE=1 prints at exit (slowest total first)."""
    global _libc_free
    if _libc_free is None:
        _libc_free = ctypes.CDLL(None).free
        _libc_free.argtypes = [ctypes.c_void_p]
    p = ctypes.c_void_p()
    _ffi.check(_ffi.lib().blkrt_profile_table(ctypes.byref(p)))
    try:
        return ctypes.string_at(p.value).decode()
    finally:
        _libc_free(p)


def profile_reset():
    """Forget every row."""
    _ffi.check(_ffi.lib().blkrt_profile_reset())


def do_bench(fn, device=None, warmup=3, rep=20, flush_bytes=None, stream=None, quantiles=None,
             return_mode="median"):
    """Time fn() (which launches work) like triton.testing.do_bench, through
    blkrt_bench: `warmup` untimed calls, then `rep` calls, each after writing
    a flush buffer (a cold L2: 4 x the GPU's L2, or 256 MB where unknown; 32
    MB on the CPU device; flush_bytes overrides, 0 turns it off) and timed
    between two events on `stream` (None: the default stream). Returns the
    median in ms, or return_mode "min" / "max" / "mean" / "all" (every time),
    or with quantiles=[0.2, 0.8] a list of those quantiles of the times.
    device: a blk.Device (None: blk.Device()). An exception in fn stops the
    benchmark and is raised."""
    dev = device if device is not None else Device()
    reps = int(rep)
    if reps <= 0:
        raise ValueError("do_bench: rep must be at least 1")
    times = (ctypes.c_float * reps)()
    flush = (ctypes.c_size_t(-1).value if flush_bytes == 0 else 0 if flush_bytes is None else int(flush_bytes))
    opts = _ffi.BenchOptions(int(warmup) if warmup > 0 else -1, reps, flush, times)
    failure = []

    def call(_user):
        try:
            fn()
            return BLKRT_OK
        except Error as e:  # no exception may cross C: reported after the call
            failure.append(e)
            return e.status
        except Exception as e:
            failure.append(e)
            return BLKRT_ERR_INVALID_VALUE
    cb = _ffi.BENCH_FN(call)
    res = _ffi.BenchResult()
    st = _ffi.lib().blkrt_bench(dev._handle, _stream_handle(stream, dev), cb, None, ctypes.byref(opts),
                                ctypes.byref(res))
    if failure:
        raise failure[0]
    _ffi.check(st)
    ts = sorted(times[:reps])
    if quantiles is not None:
        def q(f):  # linear interpolation, as torch.quantile
            x = f * (len(ts) - 1)
            i = int(x)
            return ts[i] if i + 1 >= len(ts) else ts[i] + (ts[i + 1] - ts[i]) * (x - i)
        return [q(float(f)) for f in quantiles]
    if return_mode == "all":
        return list(times[:reps])
    if return_mode not in ("median", "min", "max", "mean"):
        raise ValueError("do_bench: return_mode is one of median, min, max, mean, all")
    return getattr(res, return_mode + "_ms")
