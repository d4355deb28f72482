"""ctypes declarations of libblkrt (runtime/include/blk/blkrt.h) and how the
library is found. Internal to the blk package."""
import ctypes
import glob
import os
import threading

c_int, c_uint8, c_uint32, c_int64, c_uint64, c_size_t, c_double, c_float = (
    ctypes.c_int, ctypes.c_uint8, ctypes.c_uint32, ctypes.c_int64, ctypes.c_uint64,
    ctypes.c_size_t, ctypes.c_double, ctypes.c_float)
c_char_p, c_void_p, POINTER, byref = ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER, ctypes.byref

# blkrt_status, in header order.
STATUS_NAMES = (
    "BLKRT_OK", "BLKRT_ERR_NO_DRIVER", "BLKRT_ERR_NO_DEVICE", "BLKRT_ERR_INVALID_HANDLE",
    "BLKRT_ERR_INVALID_VALUE", "BLKRT_ERR_INVALID_LAUNCH", "BLKRT_ERR_META", "BLKRT_ERR_NOT_FOUND",
    "BLKRT_ERR_JIT", "BLKRT_ERR_PTX_VERSION", "BLKRT_ERR_OUT_OF_MEMORY", "BLKRT_ERR_NO_COMPILER",
    "BLKRT_ERR_COMPILE", "BLKRT_ERR_LAUNCH_FAILED", "BLKRT_ERR_UNSUPPORTED", "BLKRT_ERR_IO",
    "BLKRT_ERR_DRIVER", "BLKRT_ERR_NO_PEER_ACCESS", "BLKRT_ERR_TIMEOUT",
)

# BLKRT_OK = 0, BLKRT_ERR_NO_DRIVER = 1, ... as module constants
globals().update({_n: _i for _i, _n in enumerate(STATUS_NAMES)})

NO_LIBRARY = -1  # Error.status when libblkrt.so itself cannot be loaded (not a blkrt status)
DEVICE_CPU = -1
ARG_PTR, ARG_INT, ARG_FLOAT = 0, 1, 2


class Error(Exception):
    """A libblkrt failure: .status (int), .status_name ("BLKRT_ERR_JIT", ...)
    and .message (blkrt_last_error() of the failing call)."""

    def __init__(self, status, message):
        self.status = int(status)
        if 0 <= self.status < len(STATUS_NAMES):
            self.status_name = STATUS_NAMES[self.status]
        elif self.status == NO_LIBRARY:
            self.status_name = "BLK_NO_LIBRARY"
        else:
            self.status_name = "BLKRT_ERR_%d" % self.status
        self.message = message
        super().__init__("%s: %s" % (self.status_name, message))


class DeviceInfo(ctypes.Structure):
    _fields_ = [
        ("kind", c_int),
        ("ordinal", c_int),
        ("name", ctypes.c_char * 256),
        ("sm", c_int),
        ("arch", ctypes.c_char * 16),
        ("sm_count", c_int),
        ("warp_size", c_int),
        ("max_threads_per_block", c_int),
        ("max_grid", c_uint32 * 3),
        ("max_shared_per_block", c_int),
        ("max_shared_optin", c_int),
        ("total_memory", c_size_t),
        ("driver_version", c_int),
    ]


class KernelInfo(ctypes.Structure):
    _fields_ = [
        ("name", c_char_p),
        ("checked", c_int),
        ("num_params", c_int),
        ("num_variants", c_int),
        ("num_warps", c_int),
        ("shared_bytes", c_int),
    ]


class Define(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("is_float", c_int), ("ival", c_int64), ("fval", c_double)]


class SourceOptions(ctypes.Structure):
    _fields_ = [
        ("path", c_char_p),
        ("defines", POINTER(Define)),
        ("ndefines", c_int),
        ("kernel", c_char_p),
        ("cache_dir", c_char_p),
    ]


class Arg(ctypes.Structure):
    """blkrt_arg: {kind; union {u64 ptr; i64 i; double f}} — 16 bytes."""
    _fields_ = [("kind", c_int), ("bits", c_uint64)]


assert ctypes.sizeof(Arg) == 16

# void grid(blkrt_kernel *k, const blkrt_arg *args, int nargs, uint32_t grid[3], void *user)
GRID_FN = ctypes.CFUNCTYPE(None, c_void_p, c_void_p, c_int, POINTER(c_uint32), c_void_p)
HOOK_FN = ctypes.CFUNCTYPE(None, c_void_p)


class AutotuneOptions(ctypes.Structure):
    _fields_ = [("restore_bytes", POINTER(c_size_t)), ("pre_hook", HOOK_FN), ("post_hook", HOOK_FN),
                ("hook_user", c_void_p), ("reps", c_int)]

class ProfileRow(ctypes.Structure):
    _fields_ = [("kernel", ctypes.c_char * 64), ("config", ctypes.c_char * 160), ("device", c_int),
                ("launches", c_uint64), ("total_ms", c_double), ("median_ms", c_double), ("min_ms", c_double),
                ("max_ms", c_double), ("bytes", c_double), ("flops", c_double), ("gbps", c_double),
                ("tflops", c_double)]


class BenchOptions(ctypes.Structure):
    _fields_ = [("warmup", c_int), ("reps", c_int), ("flush_bytes", c_size_t), ("times", POINTER(c_float))]


class BenchResult(ctypes.Structure):
    _fields_ = [("median_ms", c_double), ("min_ms", c_double), ("max_ms", c_double), ("mean_ms", c_double),
                ("reps", c_int), ("flush_bytes", c_size_t)]


# blkrt_status fn(void *user)
BENCH_FN = ctypes.CFUNCTYPE(ctypes.c_int, c_void_p)

H = c_void_p  # every handle is an opaque pointer
S = c_int     # blkrt_status

# name: (argtypes). Every function returns blkrt_status unless listed in _RESTYPES.
_PROTOS = {
    "blkrt_status_name": [c_int],
    "blkrt_last_error": [],
    "blkrt_version": [],
    "blkrt_device_count": [POINTER(c_int)],
    "blkrt_device_open": [c_int, POINTER(H)],
    "blkrt_device_close": [H],
    "blkrt_device_get_info": [H, POINTER(DeviceInfo)],
    "blkrt_device_synchronize": [H],
    "blkrt_device_synchronize_timeout": [H, c_uint32],
    "blkrt_device_set_step_limit": [H, c_uint64],
    "blkrt_device_can_access_peer": [H, H, POINTER(c_int)],
    "blkrt_device_enable_peer_access": [H, H],
    "blkrt_memcpy_peer": [H, c_uint64, H, c_uint64, c_size_t],
    "blkrt_memcpy_peer_async": [H, c_uint64, H, c_uint64, c_size_t, H],
    "blkrt_malloc": [H, c_size_t, POINTER(c_uint64)],
    "blkrt_free": [H, c_uint64],
    "blkrt_memcpy_htod": [H, c_uint64, c_void_p, c_size_t],
    "blkrt_memcpy_dtoh": [H, c_void_p, c_uint64, c_size_t],
    "blkrt_memcpy_dtod": [H, c_uint64, c_uint64, c_size_t],
    "blkrt_memset": [H, c_uint64, c_uint8, c_size_t],
    "blkrt_memcpy_htod_async": [H, c_uint64, c_void_p, c_size_t, H],
    "blkrt_memcpy_dtoh_async": [H, c_void_p, c_uint64, c_size_t, H],
    "blkrt_memcpy_dtod_async": [H, c_uint64, c_uint64, c_size_t, H],
    "blkrt_memset_async": [H, c_uint64, c_uint8, c_size_t, H],
    "blkrt_stream_create": [H, POINTER(H)],
    "blkrt_stream_destroy": [H],
    "blkrt_stream_synchronize": [H],
    "blkrt_stream_synchronize_timeout": [H, H, c_uint32],
    "blkrt_stream_wrap": [H, c_uint64, POINTER(H)],
    "blkrt_event_create": [H, POINTER(H)],
    "blkrt_event_destroy": [H],
    "blkrt_event_record": [H, H],
    "blkrt_event_synchronize": [H],
    "blkrt_event_elapsed_ms": [H, H, POINTER(c_float)],
    "blkrt_graph_begin_capture": [H],
    "blkrt_graph_end_capture": [H, POINTER(H)],
    "blkrt_graph_launch": [H, H],
    "blkrt_graph_destroy": [H],
    "blkrt_module_load_ptx": [H, c_char_p, c_size_t, POINTER(H)],
    "blkrt_module_load_cubin": [H, c_char_p, c_size_t, c_char_p, POINTER(H)],
    "blkrt_module_load_source": [H, c_char_p, c_size_t, POINTER(SourceOptions), POINTER(H)],
    "blkrt_module_unload": [H],
    "blkrt_module_for_device": [H, H, POINTER(H)],
    "blkrt_module_jit_log": [H, POINTER(c_char_p)],
    "blkrt_module_kernel": [H, c_char_p, POINTER(H)],
    "blkrt_kernel_get_info": [H, POINTER(KernelInfo)],
    "blkrt_kernel_param": [H, c_int, POINTER(c_char_p), POINTER(c_char_p)],
    "blkrt_kernel_const_at": [H, c_int, POINTER(c_char_p), POINTER(c_char_p)],
    "blkrt_kernel_const_int": [H, c_char_p, POINTER(c_int64)],
    "blkrt_kernel_const_float": [H, c_char_p, POINTER(c_double)],
    # grid and args are passed as bytes (struct-packed), see Kernel.
    "blkrt_launch": [H, c_char_p, c_char_p, c_int, H],
    "blkrt_kernel_max_programs": [H, c_char_p, c_int, POINTER(c_uint32)],
    "blkrt_launch_raw": [H, c_char_p, c_char_p, c_uint32, c_void_p, H],
    "blkrt_autotuner_create": [H, c_char_p, c_size_t, POINTER(SourceOptions), c_char_p, POINTER(H)],
    "blkrt_autotuner_destroy": [H],
    "blkrt_autotuner_num_configs": [H, POINTER(c_int)],
    "blkrt_autotuner_config": [H, c_int, POINTER(c_char_p), POINTER(H)],
    "blkrt_autotuner_launch": [H, GRID_FN, c_void_p, c_char_p, c_int, POINTER(AutotuneOptions), H,
                               POINTER(c_int), POINTER(c_int)],
    "blkrt_profile_enable": [c_int],
    "blkrt_profile_set_work": [H, c_double, c_double],
    "blkrt_profile_rows": [POINTER(ProfileRow), c_int, POINTER(c_int)],
    "blkrt_profile_table": [POINTER(c_void_p)],
    "blkrt_profile_reset": [],
    "blkrt_bench": [H, H, BENCH_FN, c_void_p, POINTER(BenchOptions), POINTER(BenchResult)],
}
_RESTYPES = {"blkrt_status_name": c_char_p, "blkrt_last_error": c_char_p, "blkrt_version": c_char_p}

_lock = threading.Lock()
_lib = None
_lib_path = None


def _candidates():
    """libblk.so (compiler + runtime: JIT from source, the CPU device) before
    libblkrt.so (runtime only: PTX and cubins) at each place."""
    env = os.environ.get("BLK_LIBBLKRT")
    if env:
        return [env]  # an explicit choice: nothing else is tried
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.path.join(here, "libblk.so"), os.path.join(here, "libblkrt.so")]  # the installed wheel
    root = os.path.normpath(os.path.join(here, "..", "..", ".."))  # runtime/python/blk -> repo root
    for name in ("libblk.so", "libblkrt.so"):
        for b in ("build", "build-release", "build-py"):
            out.append(os.path.join(root, b, "runtime", name))
        others = sorted(glob.glob(os.path.join(root, "build*", "runtime", name)),
                        key=lambda p: -os.path.getmtime(p))
        out += [p for p in others if p not in out]
    import ctypes.util
    for name in ("blk", "blkrt"):
        found = ctypes.util.find_library(name)
        if found:
            out.append(found)
    return out


def lib():
    """The loaded libblkrt (loaded on first use)."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if os.sep in path and not os.path.exists(path):
                tried.append(path + " (missing)")
                continue
            try:
                handle = ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
                continue
            for name, argtypes in _PROTOS.items():
                fn = getattr(handle, name)
                fn.argtypes = argtypes
                fn.restype = _RESTYPES.get(name, S)
            if hasattr(handle, "blk_version"):  # libblk.so (not libblkrt.so)
                handle.blk_version.argtypes = []
                handle.blk_version.restype = c_char_p
            _lib, _lib_path = handle, path
            return _lib
        raise Error(NO_LIBRARY, "libblk.so / libblkrt.so not found (set BLK_LIBBLKRT to its path); tried: " +
                    "; ".join(tried))


def library_path():
    lib()
    return _lib_path


def last_error():
    return lib().blkrt_last_error().decode("utf-8", "replace")


def check(status):
    """Raise Error for a failed blkrt call (reads this thread's last error)."""
    if status:
        raise Error(status, last_error())
