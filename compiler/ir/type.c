/* type.c — dtype properties and block types. */
#include "type.h"

#include <stdio.h>
#include <string.h>

static const struct { const char *name; int bits; char cls; } dtypes[DT_COUNT] = {
#define X(e, n, b, f) {n, b, f},
    BLK_DTYPES(X)
#undef X
};

const char *dtype_name(blk_dtype t) { return t < DT_COUNT ? dtypes[t].name : "?"; }
int dtype_bits(blk_dtype t) { return t < DT_COUNT ? dtypes[t].bits : 0; }
int dtype_bytes(blk_dtype t) { return t == DT_BOOL ? 1 : dtype_bits(t) / 8; }
bool dtype_is_float(blk_dtype t) { return t < DT_COUNT && dtypes[t].cls == 'F'; }
bool dtype_is_signed(blk_dtype t) { return t < DT_COUNT && dtypes[t].cls == 'S'; }
bool dtype_is_unsigned(blk_dtype t) { return t < DT_COUNT && dtypes[t].cls == 'U'; }
bool dtype_is_int(blk_dtype t) { return dtype_is_signed(t) || dtype_is_unsigned(t); }

int dtype_from_name(const char *name) {
    for (int i = 0; i < DT_COUNT; i++)
        if (i != DT_PTR && strcmp(dtypes[i].name, name) == 0) return i;
    return -1;
}

ir_type ir_scalar(blk_dtype t) {
    ir_type r;
    memset(&r, 0, sizeof r);
    r.dtype = (uint8_t)t;
    return r;
}

ir_type ir_ptr(blk_dtype pointee, bool is_const) {
    ir_type r = ir_scalar(DT_PTR);
    r.pointee = (uint8_t)pointee;
    r.ptr_const = is_const;
    return r;
}

ir_type ir_shaped(ir_type elem, int rank, const int32_t *shape) {
    ir_type r = ir_elem(elem);
    if (rank < 0) rank = 0;
    if (rank > IR_MAX_RANK) rank = IR_MAX_RANK;
    r.rank = (uint8_t)rank;
    for (int i = 0; i < rank; i++) r.shape[i] = shape[i];
    return r;
}

ir_type ir_elem(ir_type t) {
    t.rank = 0;
    memset(t.shape, 0, sizeof t.shape);
    return t;
}

bool ir_shape_eq(ir_type a, ir_type b) {
    if (a.rank != b.rank) return false;
    for (int i = 0; i < a.rank; i++)
        if (a.shape[i] != b.shape[i]) return false;
    return true;
}

bool ir_type_eq(ir_type a, ir_type b) {
    if (a.dtype != b.dtype || !ir_shape_eq(a, b)) return false;
    if (a.dtype == DT_PTR && (a.pointee != b.pointee || a.ptr_const != b.ptr_const)) return false;
    return true;
}

int64_t ir_numel(ir_type t) {
    int64_t n = 1;
    for (int i = 0; i < t.rank; i++) n *= t.shape[i];
    return n;
}

bool ir_is_block(ir_type t) { return t.rank > 0; }

void ir_type_str(ir_type t, char *buf, int size) {
    int n;
    if (t.dtype == DT_PTR)
        n = snprintf(buf, (size_t)size, "*%s%s", t.ptr_const ? "const " : "", dtype_name(t.pointee));
    else
        n = snprintf(buf, (size_t)size, "%s", dtype_name(t.dtype));
    if (t.rank == 0 || n < 0 || n >= size) return;
    for (int i = 0; i < t.rank && n < size; i++)
        n += snprintf(buf + n, (size_t)(size - n), "%s%d", i ? ", " : "[", t.shape[i]);
    if (n < size) snprintf(buf + n, (size_t)(size - n), "]");
}
