/* fake_nvtx.c — an NVTX injection library, as Nsight Systems ships one
 * (libToolsInjection64.so): libblkrt loads it from NVTX_INJECTION64_PATH and
 * calls InitializeInjectionNvtx2. It asks for the core module's function
 * table through the export table, the way a real tool does, fills the
 * RangePushA / RangePop slots and records each range so test_profile can
 * read them (fake_nvtx_* below, through dlopen of the same path). The ids
 * and layouts are those of nvtx3/nvtxDetail/nvtxTypes.h. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef void (*nvtx_fn)(void);
typedef const void *(*get_export_table_fn)(uint32_t id);

typedef struct {
    size_t struct_size;
    int (*get_module_table)(int module, nvtx_fn ***out_table, unsigned *out_size);
} callbacks_table;

static char log_[64][256];
static int nlog, depth, max_depth, inits;

static int push_a(const char *message) {
    if (nlog < 64) snprintf(log_[nlog++], sizeof log_[0], "%s", message);
    if (++depth > max_depth) max_depth = depth;
    return depth - 1;
}

static int pop(void) { return depth > 0 ? --depth : -1; }

EXPORT int InitializeInjectionNvtx2(get_export_table_fn get) {
    inits++;
    const callbacks_table *cb = get(1); /* NVTX_ETID_CALLBACKS */
    if (!cb || cb->struct_size < sizeof *cb) return 0;
    nvtx_fn **table = NULL;
    unsigned size = 0;
    if (!cb->get_module_table(1, &table, &size) || size < 12) return 0; /* NVTX_CB_MODULE_CORE */
    if (table[0] != NULL || table[size] != NULL) return 0;             /* the layout NVTX3 gives */
    *table[9] = (nvtx_fn)push_a;                                       /* NVTX_CBID_CORE_RangePushA */
    *table[11] = (nvtx_fn)pop;                                         /* NVTX_CBID_CORE_RangePop */
    /* a tool also fills other modules' slots: they must exist */
    for (int m = 2; m <= 6; m++) {
        if (!cb->get_module_table(m, &table, &size)) return 0;
        for (unsigned i = 1; i < size; i++) *table[i] = NULL;
    }
    return 1;
}

EXPORT int fake_nvtx_count(void) { return nlog; }
EXPORT const char *fake_nvtx_range(int i) { return i >= 0 && i < nlog ? log_[i] : NULL; }
EXPORT int fake_nvtx_depth(void) { return depth; }
EXPORT int fake_nvtx_inits(void) { return inits; }
