/* test_convert — argument conversion (runtime/convert.c): the narrow float
 * encodings bit for bit (rounding, subnormals, overflow, NaN) and the value
 * written into a parameter slot for every type. */
#include <math.h>

#include "meta.h"
#include "rt.h"
#include "rt_test.h"

static void floats(void) {
    /* f16 */
    CHECK(rt_f64_to_f16(1.5) == 0x3E00, "f16 1.5");
    CHECK(rt_f64_to_f16(-2.0) == 0xC000, "f16 -2");
    CHECK(rt_f64_to_f16(65504.0) == 0x7BFF, "f16 max");
    CHECK(rt_f64_to_f16(65519.99) == 0x7BFF, "f16 below the rounding point stays max");
    CHECK(rt_f64_to_f16(65520.0) == 0x7C00, "f16 65520 rounds (ties to even) to inf");
    CHECK(rt_f64_to_f16(1e9) == 0x7C00 && rt_f64_to_f16(-1e9) == 0xFC00, "f16 overflow -> inf");
    CHECK(rt_f64_to_f16(INFINITY) == 0x7C00, "f16 inf");
    CHECK(rt_f64_to_f16(NAN) == 0x7FFF, "f16 NaN canonical");
    CHECK(rt_f64_to_f16(-0.0) == 0x8000, "f16 -0");
    CHECK(rt_f64_to_f16(0x1p-24) == 0x0001, "f16 smallest subnormal");
    CHECK(rt_f64_to_f16(0x1p-25) == 0x0000, "f16 half the smallest subnormal ties to even (0)");
    CHECK(rt_f64_to_f16(0x1.8p-25) == 0x0001, "f16 above half rounds up");
    CHECK(rt_f64_to_f16(0x1p-14) == 0x0400, "f16 smallest normal");
    CHECK(rt_f64_to_f16(0x1.ffcp-15) == 0x0400, "f16 largest subnormal + half ulp rounds to the smallest normal");
    CHECK(rt_f64_to_f16(1.0 + 0x1p-11) == 0x3C00, "f16 1 + half ulp ties to even (down)");
    CHECK(rt_f64_to_f16(1.0 + 3 * 0x1p-11) == 0x3C02, "f16 1 + 1.5 ulp ties to even (up)");
    CHECK(rt_f64_to_f16(1e-300) == 0 && rt_f64_to_f16(0x1p-1074) == 0, "f16 tiny doubles -> 0");
    CHECK(rt_f64_to_f16(0.1) == 0x2E66, "f16 0.1");
    /* bf16 */
    CHECK(rt_f64_to_bf16(1.5) == 0x3FC0, "bf16 1.5");
    CHECK(rt_f64_to_bf16(3.140625) == 0x4049, "bf16 3.140625");
    CHECK(rt_f64_to_bf16(1.0 + 0x1p-8) == 0x3F80, "bf16 tie to even");
    CHECK(rt_f64_to_bf16(1e39) == 0x7F80, "bf16 overflow -> inf");
    CHECK(rt_f64_to_bf16(NAN) == 0x7FFF, "bf16 NaN");
    CHECK(rt_f64_to_bf16(0x1p-133) == 0x0001, "bf16 smallest subnormal");
    /* f8 e4m3 (no inf, saturating) */
    CHECK(rt_f64_to_f8e4m3(1.0) == 0x38, "e4m3 1");
    CHECK(rt_f64_to_f8e4m3(448.0) == 0x7E, "e4m3 max");
    CHECK(rt_f64_to_f8e4m3(464.0) == 0x7E, "e4m3 464 ties to even 448");
    CHECK(rt_f64_to_f8e4m3(500.0) == 0x7E && rt_f64_to_f8e4m3(-1e6) == 0xFE, "e4m3 saturates");
    CHECK(rt_f64_to_f8e4m3(INFINITY) == 0x7E, "e4m3 inf saturates");
    CHECK(rt_f64_to_f8e4m3(NAN) == 0x7F, "e4m3 NaN");
    CHECK(rt_f64_to_f8e4m3(0x1p-9) == 0x01, "e4m3 smallest subnormal");
    /* f8 e5m2 */
    CHECK(rt_f64_to_f8e5m2(1.0) == 0x3C, "e5m2 1");
    CHECK(rt_f64_to_f8e5m2(57344.0) == 0x7B, "e5m2 max");
    CHECK(rt_f64_to_f8e5m2(1e9) == 0x7B, "e5m2 saturates");
    CHECK(rt_f64_to_f8e5m2(NAN) == 0x7F, "e5m2 NaN");
}

/* A kernel with one parameter of each type, parsed from blk-meta. */
static blkrt_kernel make_kernel(rt_meta *m) {
    const char *t = "// blk-meta v1 kernel=k entry=k num_warps=4 shared=0 "
                    "params=a:bool,b:i8,c:i16,d:i32,e:i64,f:u8,g:u16,h:u32,i:u64,j:f16,k:bf16,l:f32,m:f64,"
                    "n:f8e4m3,o:f8e5m2,p:*u8\n";
    blkrt_kernel k;
    memset(&k, 0, sizeof k);
    if (rt_meta_parse(t, strlen(t), m) != BLKRT_OK) {
        CHECK(0, "meta: %s", blkrt_last_error());
        return k;
    }
    k.name = "k";
    k.checked = true;
    k.meta = &m->kernels[0];
    return k;
}

static uint64_t conv(const blkrt_kernel *k, int i, blkrt_arg a, blkrt_status *st, bool *d16, bool *eq1) {
    uint64_t slot = 0xdeadbeef;
    *st = rt_convert_arg(k, i, &a, &slot, d16, eq1);
    return slot;
}

static void slots(void) {
    rt_meta m;
    blkrt_kernel k = make_kernel(&m);
    if (!k.meta) return;
    blkrt_status st;
    bool d16, eq1;
    CHECK(conv(&k, 0, BLKRT_INT(1), &st, &d16, &eq1) == 1 && st == 0 && eq1, "bool 1");
    CHECK(conv(&k, 1, BLKRT_INT(-1), &st, &d16, &eq1) == 0xFF && st == 0, "i8 -1 -> 0xFF");
    CHECK(conv(&k, 2, BLKRT_INT(-2), &st, &d16, &eq1) == 0xFFFE && st == 0, "i16 -2");
    CHECK(conv(&k, 3, BLKRT_INT(-16), &st, &d16, &eq1) == 0xFFFFFFF0u && st == 0 && d16 && !eq1, "i32 -16 is d16");
    CHECK(conv(&k, 4, BLKRT_INT(INT64_MIN), &st, &d16, &eq1) == (uint64_t)INT64_MIN && st == 0, "i64 min");
    CHECK(conv(&k, 7, BLKRT_INT(4294967295LL), &st, &d16, &eq1) == 0xFFFFFFFFu && st == 0, "u32 max");
    CHECK(conv(&k, 8, BLKRT_INT(-1), &st, &d16, &eq1) == UINT64_MAX && st == 0, "u64 takes the bits of -1");
    CHECK(conv(&k, 9, BLKRT_FLOAT(1.5), &st, &d16, &eq1) == 0x3E00 && st == 0, "f16 slot");
    CHECK(conv(&k, 10, BLKRT_FLOAT(1.5), &st, &d16, &eq1) == 0x3FC0 && st == 0, "bf16 slot");
    uint64_t s = conv(&k, 11, BLKRT_FLOAT(0.1), &st, &d16, &eq1);
    float f = 0.1f;
    uint32_t fb;
    memcpy(&fb, &f, 4);
    CHECK(s == fb && st == 0, "f32 slot holds the float's bits only (0x%llx)", (unsigned long long)s);
    double dv = 0.1;
    uint64_t db;
    memcpy(&db, &dv, 8);
    CHECK(conv(&k, 12, BLKRT_FLOAT(0.1), &st, &d16, &eq1) == db && st == 0, "f64 slot");
    CHECK(conv(&k, 13, BLKRT_FLOAT(448), &st, &d16, &eq1) == 0x7E && st == 0, "e4m3 slot");
    CHECK(conv(&k, 14, BLKRT_FLOAT(1), &st, &d16, &eq1) == 0x3C && st == 0, "e5m2 slot");
    CHECK(conv(&k, 15, BLKRT_PTR(0x1000), &st, &d16, &eq1) == 0x1000 && st == 0 && d16, "pointer aligned");
    conv(&k, 15, BLKRT_PTR(0x1004), &st, &d16, &eq1);
    CHECK(st == 0 && !d16, "pointer not 16-aligned");

    /* range and kind errors name the argument */
    conv(&k, 0, BLKRT_INT(2), &st, &d16, &eq1);
    CHECK(st == BLKRT_ERR_INVALID_LAUNCH && strcmp(blkrt_last_error(), "kernel 'k': argument 1 'a' (bool): 2 is out of range") == 0,
          "bool 2: %s", blkrt_last_error());
    conv(&k, 1, BLKRT_INT(128), &st, &d16, &eq1);
    CHECK(st == BLKRT_ERR_INVALID_LAUNCH && strcmp(blkrt_last_error(), "kernel 'k': argument 2 'b' (i8): 128 is out of range") == 0,
          "i8 128: %s", blkrt_last_error());
    conv(&k, 5, BLKRT_INT(-1), &st, &d16, &eq1);
    CHECK(st == BLKRT_ERR_INVALID_LAUNCH && strstr(blkrt_last_error(), "argument 6 'f' (u8): -1 is out of range"), "u8 -1");
    conv(&k, 3, BLKRT_INT(1LL << 31), &st, &d16, &eq1);
    CHECK(st == BLKRT_ERR_INVALID_LAUNCH && strstr(blkrt_last_error(), "2147483648 is out of range"), "i32 2^31");
    conv(&k, 11, BLKRT_INT(1), &st, &d16, &eq1);
    CHECK(st == BLKRT_ERR_INVALID_LAUNCH &&
              strcmp(blkrt_last_error(),
                     "kernel 'k': argument 12 'l' (f32) needs a float (BLKRT_FLOAT), got an integer (BLKRT_INT)") == 0,
          "int for float: %s", blkrt_last_error());
    conv(&k, 15, BLKRT_INT(0), &st, &d16, &eq1);
    CHECK(st == BLKRT_ERR_INVALID_LAUNCH &&
              strcmp(blkrt_last_error(),
                     "kernel 'k': argument 16 'p' (*u8) needs a pointer (BLKRT_PTR), got an integer (BLKRT_INT)") == 0,
          "int for pointer: %s", blkrt_last_error());
    blkrt_arg junk = {.kind = (blkrt_arg_kind)7};
    conv(&k, 3, junk, &st, &d16, &eq1);
    CHECK(st == BLKRT_ERR_INVALID_LAUNCH && strstr(blkrt_last_error(), "got an argument of unknown kind"), "junk kind");
    rt_meta_free(&m);
}

int main(void) {
    floats();
    slots();
    return test_finish("test_convert");
}
