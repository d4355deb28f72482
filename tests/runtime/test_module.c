/* test_module — loading PTX and cubin against the fake driver: kernels by
 * blk-meta name and raw entries, kernel info, the driver's JIT error log in
 * the message, the unsupported-PTX-version message, metadata errors reported
 * before the driver sees the image, entries the metadata names but the
 * module lacks. */
#include "cuda_api.h"
#include "fake_cuda.h"
#include "rt_test.h"

static fake_api F;
static blkrt_device *d;

static const char GOOD[] = ".version 8.0\n.target sm_90a\n.address_size 64\n"
    VADD_META("vector_add", " spec=x:-,y:-,out:-,n:-")
    "// blk-meta v1 kernel=scale entry=scale num_warps=2 shared=0 params=x:*bf16,alpha:f32,n:i64 consts=EPS:f32:0.5\n"
    PTX_ENTRY("vector_add", VADD_PARAMS)
    PTX_ENTRY("scale", ".param .u64 x, .param .f32 alpha, .param .u64 n")
    PTX_ENTRY("raw_kernel", ".param .u64 p");

static void kernels(void) {
    blkrt_module *m = load_ptx(d, GOOD);
    if (!m) return;
    const char *log = NULL;
    OK(blkrt_module_jit_log(m, &log));
    CHECK(log && strstr(log, "fake driver compiled 3 entries"), "JIT info log kept: '%s'", log ? log : "(null)");

    blkrt_kernel *k = NULL, *s = NULL, *raw = NULL, *none = (blkrt_kernel *)1;
    OK(blkrt_module_kernel(m, "vector_add", &k));
    OK(blkrt_module_kernel(m, "scale", &s));
    blkrt_kernel_info info;
    OK(blkrt_kernel_get_info(k, &info));
    CHECK(strcmp(info.name, "vector_add") == 0 && info.checked && info.num_params == 4 && info.num_variants == 1 &&
              info.num_warps == 4 && info.shared_bytes == 0,
          "vector_add info");
    const char *pn, *pt;
    OK(blkrt_kernel_param(k, 2, &pn, &pt));
    CHECK(strcmp(pn, "out") == 0 && strcmp(pt, "*f32") == 0, "param 2: %s %s", pn, pt);
    FAILS_EXACTLY(blkrt_kernel_param(k, 4, &pn, &pt), BLKRT_ERR_INVALID_VALUE,
                  "kernel 'vector_add' has 4 parameters, no parameter 4");
    int64_t block = 0;
    OK(blkrt_kernel_const_int(k, "BLOCK", &block));
    CHECK(block == 1024, "BLOCK = %lld", (long long)block);
    FAILS_EXACTLY(blkrt_kernel_const_int(k, "WARPS", &block), BLKRT_ERR_NOT_FOUND, "kernel 'vector_add' has no const 'WARPS'");
    double eps = 0;
    OK(blkrt_kernel_const_float(s, "EPS", &eps));
    CHECK(eps == 0.5, "EPS");
    FAILS_EXACTLY(blkrt_kernel_const_int(s, "EPS", &block), BLKRT_ERR_INVALID_VALUE,
                  "kernel 'scale': const 'EPS' is f32: use blkrt_kernel_const_float");
    double bf = 0;
    OK(blkrt_kernel_const_float(k, "BLOCK", &bf));
    CHECK(bf == 1024.0, "an int const read as a float");

    /* An entry without blk-meta: unchecked, looked up once. */
    int gets = F.count_calls("cuModuleGetFunction");
    OK(blkrt_module_kernel(m, "raw_kernel", &raw));
    blkrt_kernel *raw2 = NULL;
    OK(blkrt_module_kernel(m, "raw_kernel", &raw2));
    CHECK(raw && raw == raw2, "the same handle each time");
    CHECK(F.count_calls("cuModuleGetFunction") == gets + 1, "looked up once");
    OK(blkrt_kernel_get_info(raw, &info));
    CHECK(!info.checked && info.num_params == 0 && info.num_variants == 1, "raw info");
    FAILS(blkrt_kernel_param(raw, 0, &pn, &pt), BLKRT_ERR_UNSUPPORTED, "has no blk-meta");
    FAILS_EXACTLY(blkrt_module_kernel(m, "nope", &none), BLKRT_ERR_NOT_FOUND,
                  "module has no kernel named 'nope' (blk-meta kernels: vector_add, scale)");
    CHECK(none == NULL, "out cleared");
    OK(blkrt_module_unload(m));
}

static void jit_errors(void) {
    blkrt_module *m = (blkrt_module *)1;
    const char *bad = ".version 8.0\n.target sm_90a\nFAKE_JIT_ERROR Unknown symbol 'foo'\n" PTX_ENTRY("k", ".param .u64 p");
    FAILS_EXACTLY(blkrt_module_load_ptx(d, bad, strlen(bad), &m), BLKRT_ERR_JIT,
                  "cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX (218): a PTX JIT compilation failed\n"
                  "JIT error log:\nptxas application ptx input, line 9; error   : Unknown symbol 'foo'");
    CHECK(m == NULL, "out cleared");
    const char *noversion = PTX_ENTRY("k", ".param .u64 p");
    FAILS(blkrt_module_load_ptx(d, noversion, strlen(noversion), &m), BLKRT_ERR_JIT,
          "JIT error log:\nptxas fatal   : Missing .version directive at start of file");
    const char *future = ".version 9.9\n.target sm_90a\n" PTX_ENTRY("k", ".param .u64 p");
    FAILS_EXACTLY(blkrt_module_load_ptx(d, future, strlen(future), &m), BLKRT_ERR_PTX_VERSION,
                  "cuModuleLoadDataEx: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): the PTX is ISA version 9.9 (its "
                  ".version line), newer than this driver (CUDA 13.0) can compile; update the NVIDIA driver or "
                  "compile for an older PTX ISA\n"
                  "JIT error log:\nptxas fatal   : Unsupported .version 9.9; current version is '9.0'");
    F.fail_next("cuModuleLoadDataEx", RT_CUDA_ERROR_OUT_OF_MEMORY);
    FAILS(blkrt_module_load_ptx(d, GOOD, strlen(GOOD), &m), BLKRT_ERR_OUT_OF_MEMORY, "cuModuleLoadDataEx: CUDA_ERROR_OUT_OF_MEMORY");
}

static void meta_errors(void) {
    blkrt_module *m = NULL;
    int loads = F.count_calls("cuModuleLoadDataEx");
    const char *badmeta = ".version 8.0\n// blk-meta v1 kernel=k entry=k num_warps=4 shared=0 params=x:f33\n"
        PTX_ENTRY("k", ".param .f32 x");
    FAILS_EXACTLY(blkrt_module_load_ptx(d, badmeta, strlen(badmeta), &m), BLKRT_ERR_META,
                  "blk-meta line 2: parameter 'x' has unknown type 'f33'");
    CHECK(F.count_calls("cuModuleLoadDataEx") == loads, "the driver never saw a module with bad metadata");

    int unloads = F.count_calls("cuModuleUnload");
    const char *ghost = ".version 8.0\n" VADD_META("vector_add", "")
        "// blk-meta v1 kernel=vector_add entry=ghost num_warps=4 shared=0 params=x:*f32,y:*f32,out:*f32,n:i32 "
        "consts=BLOCK:i32:1024 spec=d16,d16,d16,d16\n" PTX_ENTRY("vector_add", VADD_PARAMS);
    FAILS_EXACTLY(blkrt_module_load_ptx(d, ghost, strlen(ghost), &m), BLKRT_ERR_META,
                  "blk-meta line 3: entry 'ghost' is not a kernel of this module");
    CHECK(F.count_calls("cuModuleUnload") == unloads + 1, "the half-loaded module was unloaded");

    /* A PTX copy with a counted NUL terminator loads too. */
    OK(blkrt_module_load_ptx(d, GOOD, sizeof GOOD, &m));
    OK(blkrt_module_unload(m));
    FAILS(blkrt_module_load_ptx(d, GOOD, 0, &m), BLKRT_ERR_INVALID_VALUE, "no PTX text");
    FAILS(blkrt_module_load_ptx(d, NULL, 5, &m), BLKRT_ERR_INVALID_VALUE, "no PTX text");
}

static void cubin(void) {
    static const char image[] = "\177ELF" PTX_ENTRY("vector_add", VADD_PARAMS) PTX_ENTRY("other", ".param .u64 p");
    blkrt_module *m = NULL;
    blkrt_kernel *k = NULL;
    OK(blkrt_module_load_cubin(d, image, sizeof image, VADD_META("vector_add", ""), &m));
    OK(blkrt_module_kernel(m, "vector_add", &k));
    blkrt_kernel_info info;
    OK(blkrt_kernel_get_info(k, &info));
    CHECK(info.checked && info.num_params == 4, "cubin kernel checked through its separate meta");
    OK(blkrt_module_kernel(m, "other", &k));
    OK(blkrt_module_unload(m));
    OK(blkrt_module_load_cubin(d, image, sizeof image, NULL, &m));
    OK(blkrt_module_kernel(m, "vector_add", &k));
    OK(blkrt_kernel_get_info(k, &info));
    CHECK(!info.checked, "cubin without meta: raw kernels");
    OK(blkrt_module_unload(m));
    FAILS(blkrt_module_load_cubin(d, image, sizeof image, "// blk-meta v1 kernel=k", &m), BLKRT_ERR_META,
          "blk-meta line 1: missing 'entry='");
}

static void other_devices(void) {
    blkrt_device *cpu;
    blkrt_module *m = NULL;
    OK(blkrt_device_open(BLKRT_DEVICE_CPU, &cpu));
    FAILS_EXACTLY(blkrt_module_load_ptx(cpu, GOOD, strlen(GOOD), &m), BLKRT_ERR_UNSUPPORTED,
                  "blkrt_module_load_ptx: the CPU device runs .blk source (blkrt_module_load_source), not PTX");
    FAILS_EXACTLY(blkrt_module_load_source(cpu, "kernel k() {}", 13, NULL, &m), BLKRT_ERR_NO_COMPILER,
                  "no compiler linked: loading .blk source needs libblkrt_jit (link it and call blkrt_jit_install())");
    FAILS(blkrt_module_load_source(d, "kernel k() {}", 13, NULL, &m), BLKRT_ERR_NO_COMPILER, "no compiler linked");
    OK(blkrt_device_close(cpu));

    /* One module per device: modules of device 1 run in its context. */
    blkrt_device *d1;
    OK(blkrt_device_open(1, &d1));
    OK(blkrt_module_load_ptx(d1, GOOD, strlen(GOOD), &m));
    FAILS(blkrt_device_close(d1), BLKRT_ERR_INVALID_VALUE, "1 module(s), stream(s), event(s) or graph(s)");
    OK(blkrt_module_unload(m));
    OK(blkrt_device_close(d1));
}

int main(void) {
    if (fake_api_load(&F) != 0) return 1;
    if (blkrt_device_open(0, &d) != BLKRT_OK) {
        fprintf(stderr, "%s\n", blkrt_last_error());
        return 1;
    }
    kernels();
    jit_errors();
    meta_errors();
    cubin();
    other_devices();
    OK(blkrt_device_close(d));
    CHECK(F.ctx_depth() == 0, "contexts restored");
    return test_finish("test_module");
}
