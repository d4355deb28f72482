/* test_gpu_tmap — tensor maps on a real GPU (label gpu; sm_90 or newer).
 *
 * The runtime half of TMA, checked without the compiler: a hand-written
 * sm_90a entry copies one 32 x 8 f32 box per block through
 * cp.async.bulk.tensor (its map passed by the runtime after the declared
 * params, as blk-meta's tmaps= says), and a plain entry does the same with
 * bounds-checked loads. Each writes a flag saying which ran. On a ragged
 * tensor (37 x 68) the TMA entry must run and its output equal the C
 * reference, with zeros outside the tensor (OOB fill); on 37 x 70 (a row
 * stride of 280 bytes, not a multiple of 16) and on a misaligned base the
 * plain entry must run with the same results; a repeated launch (the map
 * cache) and a graph replay give the same output again.
 * Without a driver or an sm_90 GPU it prints "skipped: ..." and exits 77.
 *
 *   test_gpu_tmap          the test
 *   test_gpu_tmap --ptx    print the PTX (runtime/gpu_tmap_ptxas runs ptxas on it)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/blkrt.h"

#include "../test_util.h"

#define OK(call)                                                                               \
    do {                                                                                       \
        blkrt_status s_ = (call);                                                              \
        CHECK(s_ == BLKRT_OK, "%s -> %s: %s", #call, blkrt_status_name(s_), blkrt_last_error()); \
    } while (0)

#define PARAMS "params=x:*f32,out:*f32,flag:*i32,M:i32,N:i32,OW:i32"
/* %r13, %r15: the output row and column of thread %r1 in block (%r2, %r3) */
#define ROW_COL                                                                     \
    "\tshr.u32 %r10, %r1, 5;\n\tand.b32 %r11, %r1, 31;\n" \
    "\tshl.b32 %r12, %r3, 3;\n\tadd.s32 %r13, %r12, %r10;\n" \
    "\tshl.b32 %r14, %r2, 5;\n\tadd.s32 %r15, %r14, %r11;\n"
/* out[row * OW + col] = %f1; thread 0 of block (0, 0) writes flag = F */
#define STORE_AND_FLAG(F)                                                           \
    "\tld.param.u32 %r16, [OW];\n\tmad.lo.s32 %r17, %r13, %r16, %r15;\n" \
    "\tld.param.u64 %rd3, [out];\n\tcvta.to.global.u64 %rd4, %rd3;\n" \
    "\tmul.wide.s32 %rd5, %r17, 4;\n\tadd.s64 %rd6, %rd4, %rd5;\n\tst.global.f32 [%rd6], %f1;\n" \
    "\tor.b32 %r18, %r1, %r2;\n\tor.b32 %r18, %r18, %r3;\n\tsetp.ne.s32 %p3, %r18, 0;\n" \
    "\t@%p3 bra L_END;\n" \
    "\tld.param.u64 %rd7, [flag];\n\tcvta.to.global.u64 %rd8, %rd7;\n" \
    "\tmov.u32 %r19, " F ";\n\tst.global.u32 [%rd8], %r19;\n" \
    "L_END:\n\tret;\n}\n"

static const char PTX[] =
    ".version 8.0\n.target sm_90a\n.address_size 64\n"
    "// blk-meta v1 kernel=tcopy entry=tcopy_tma num_warps=8 shared=0 " PARAMS
    " spec=d16,-,-,-,-,- tmaps=x:N,M:N:32,8:0\n"
    "// blk-meta v1 kernel=tcopy entry=tcopy_plain num_warps=8 shared=0 " PARAMS "\n"
    /* block (bx, by), thread t: box element (row t / 32, col t % 32) of the
     * box at (bx * 32, by * 8) to out[(by * 8 + t / 32) * OW + bx * 32 + t % 32] */
    ".visible .entry tcopy_tma(\n"
    "\t.param .u64 x, .param .u64 out, .param .u64 flag, .param .u32 M, .param .u32 N, .param .u32 OW,\n"
    "\t.param .align 64 .b8 x_map[128]\n)\n{\n"
    "\t.reg .pred %p<4>;\n\t.reg .f32 %f<2>;\n\t.reg .b32 %r<24>;\n\t.reg .b64 %rd<12>;\n"
    "\t.shared .align 128 .b8 tile[1024];\n\t.shared .align 8 .u64 bar;\n"
    "\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %ctaid.x;\n\tmov.u32 %r3, %ctaid.y;\n"
    "\tmov.u32 %r4, bar;\n\tmov.u32 %r5, tile;\n"
    "\tsetp.ne.s32 %p1, %r1, 0;\n"
    "\t@%p1 bra L_INIT;\n"
    "\tmbarrier.init.shared::cta.b64 [%r4], 1;\n"
    "\tfence.proxy.async.shared::cta;\n"
    "L_INIT:\n"
    "\tbar.sync 0;\n"
    "\t@%p1 bra L_WAIT;\n"
    "\tmbarrier.arrive.expect_tx.shared::cta.b64 %rd9, [%r4], 1024;\n"
    "\tshl.b32 %r6, %r2, 5;\n\tshl.b32 %r7, %r3, 3;\n"
    "\tmov.b64 %rd1, x_map;\n\tcvta.param.u64 %rd2, %rd1;\n"
    "\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r5], [%rd2, {%r6, %r7}], [%r4];\n"
    "L_WAIT:\n"
    "\tmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r4], 0;\n"
    "\t@!%p2 bra L_WAIT;\n"
    "\tshl.b32 %r8, %r1, 2;\n\tadd.s32 %r9, %r5, %r8;\n\tld.shared.f32 %f1, [%r9];\n"
    ROW_COL
    STORE_AND_FLAG("1")
    ".visible .entry tcopy_plain(\n"
    "\t.param .u64 x, .param .u64 out, .param .u64 flag, .param .u32 M, .param .u32 N, .param .u32 OW\n)\n{\n"
    "\t.reg .pred %p<4>;\n\t.reg .f32 %f<2>;\n\t.reg .b32 %r<24>;\n\t.reg .b64 %rd<12>;\n"
    "\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %ctaid.x;\n\tmov.u32 %r3, %ctaid.y;\n"
    ROW_COL
    "\tld.param.u32 %r20, [M];\n\tld.param.u32 %r21, [N];\n"
    "\tmov.f32 %f1, 0f00000000;\n"
    "\tsetp.ge.s32 %p1, %r13, %r20;\n\tsetp.ge.s32 %p2, %r15, %r21;\n\tor.pred %p1, %p1, %p2;\n"
    "\t@%p1 bra L_STORE;\n"
    "\tmad.lo.s32 %r22, %r13, %r21, %r15;\n"
    "\tld.param.u64 %rd1, [x];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
    "\tmul.wide.s32 %rd10, %r22, 4;\n\tadd.s64 %rd11, %rd2, %rd10;\n\tld.global.f32 %f1, [%rd11];\n"
    "L_STORE:\n"
    STORE_AND_FLAG("2");

enum { MAXM = 40, MAXN = 96, OW = 96 };

static blkrt_device *d;
static blkrt_kernel *k;
static blkrt_ptr dx, dout, dflag;
static float host[MAXM * MAXN + 16];

/* Launch (or, with a stream, capture and replay) M x N from host + offset
 * elements; check the entry that ran and every output element. */
static void run(const char *what, int M, int N, int offset, int want_flag, blkrt_stream *capture) {
    OK(blkrt_memset(d, dout, 0xff, sizeof(float) * MAXM * OW)); /* NaN poison */
    OK(blkrt_memset(d, dflag, 0, 4));
    blkrt_arg args[] = {BLKRT_PTR(dx + 4 * (blkrt_ptr)offset), BLKRT_PTR(dout), BLKRT_PTR(dflag),
                        BLKRT_INT(M), BLKRT_INT(N), BLKRT_INT(OW)};
    uint32_t grid[3] = {(uint32_t)(N + 31) / 32, (uint32_t)(M + 7) / 8, 1};
    if (capture) {
        blkrt_graph *g;
        OK(blkrt_graph_begin_capture(capture));
        OK(blkrt_launch(k, grid, args, 6, capture));
        OK(blkrt_graph_end_capture(capture, &g));
        OK(blkrt_graph_launch(g, capture));
        OK(blkrt_stream_synchronize(capture));
        OK(blkrt_graph_destroy(g));
    } else {
        OK(blkrt_launch(k, grid, args, 6, NULL));
    }
    OK(blkrt_device_synchronize(d));
    static float out[MAXM * OW];
    int32_t flag = 0;
    OK(blkrt_memcpy_dtoh(d, out, dout, sizeof out));
    OK(blkrt_memcpy_dtoh(d, &flag, dflag, 4));
    CHECK(flag == want_flag, "%s: entry %s ran, expected %s", what, flag == 1 ? "tcopy_tma" : flag == 2 ? "tcopy_plain" : "none",
          want_flag == 1 ? "tcopy_tma" : "tcopy_plain");
    int bad = 0;
    for (int r = 0; r < (int)grid[1] * 8; r++)
        for (int c = 0; c < (int)grid[0] * 32; c++) {
            float want = r < M && c < N ? host[offset + r * N + c] : 0.0f;
            float got = out[r * OW + c];
            if (got != want && bad++ < 5)
                fprintf(stderr, "%s: out[%d][%d] = %g, expected %g\n", what, r, c, got, want);
        }
    CHECK(bad == 0, "%s: %d wrong elements", what, bad);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--ptx") == 0) {
        fputs(PTX, stdout);
        return 0;
    }
    blkrt_status st = blkrt_device_open(0, &d);
    if (st == BLKRT_ERR_NO_DRIVER || st == BLKRT_ERR_NO_DEVICE) {
        printf("skipped: %s\n", blkrt_last_error());
        return 77;
    }
    OK(st);
    if (!d) return test_finish("test_gpu_tmap");
    blkrt_device_info info;
    OK(blkrt_device_get_info(d, &info));
    if (info.sm < 90) {
        printf("skipped: %s is sm_%d; TMA needs sm_90 or newer\n", info.name, info.sm);
        blkrt_device_close(d);
        return 77;
    }
    for (int i = 0; i < MAXM * MAXN + 16; i++) host[i] = (float)(i % 1000) + 0.25f;
    blkrt_module *m = NULL;
    OK(blkrt_module_load_ptx(d, PTX, sizeof PTX - 1, &m));
    if (m) {
        OK(blkrt_module_kernel(m, "tcopy", &k));
        OK(blkrt_malloc(d, sizeof host, &dx));
        OK(blkrt_malloc(d, sizeof(float) * MAXM * OW, &dout));
        OK(blkrt_malloc(d, 16, &dflag));
        OK(blkrt_memcpy_htod(d, dx, host, sizeof host));
        blkrt_stream *s;
        OK(blkrt_stream_create(d, &s));
        run("37 x 68 (TMA)", 37, 68, 0, 1, NULL);
        run("37 x 68 again (cached map)", 37, 68, 0, 1, NULL);
        run("40 x 96 (whole boxes)", 40, 96, 0, 1, NULL);
        run("37 x 68 at +16 bytes (TMA)", 37, 68, 4, 1, NULL);
        run("37 x 70 (row stride 280 bytes: plain)", 37, 70, 0, 2, NULL);
        run("37 x 68 at +4 bytes (misaligned: plain)", 37, 68, 1, 2, NULL);
        run("5 x 4 (one box, mostly outside)", 5, 4, 0, 1, NULL);
        run("37 x 68 in a graph (TMA)", 37, 68, 0, 1, s);
        OK(blkrt_stream_destroy(s));
        OK(blkrt_free(d, dx));
        OK(blkrt_free(d, dout));
        OK(blkrt_free(d, dflag));
        OK(blkrt_module_unload(m));
    }
    OK(blkrt_device_close(d));
    return test_finish("test_gpu_tmap");
}
