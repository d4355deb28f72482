/* type.h — scalar dtypes and static-shape block types.
 *
 * Every IR value has an ir_type: an element dtype plus a shape of rank 0
 * (a scalar) to IR_MAX_RANK. Pointers are a dtype too (DT_PTR, with the
 * pointee's dtype in `pointee`), so `*f32` blocks are blocks of DT_PTR.
 */
#ifndef BLK_TYPE_H
#define BLK_TYPE_H

#include <stdbool.h>
#include <stdint.h>

#define IR_MAX_RANK 4
/* Largest block the compiler accepts (elements); sema reports larger ones. */
#define IR_MAX_NUMEL (1 << 20)

/* X(enum, name, bits, flags) — flags: F float, S signed int, U unsigned int, B bool, P pointer */
#define BLK_DTYPES(X)               \
    X(DT_BOOL, "bool", 1, 'B')      \
    X(DT_I8, "i8", 8, 'S')          \
    X(DT_I16, "i16", 16, 'S')       \
    X(DT_I32, "i32", 32, 'S')       \
    X(DT_I64, "i64", 64, 'S')       \
    X(DT_U8, "u8", 8, 'U')          \
    X(DT_U16, "u16", 16, 'U')       \
    X(DT_U32, "u32", 32, 'U')       \
    X(DT_U64, "u64", 64, 'U')       \
    X(DT_F8E4M3, "f8e4m3", 8, 'F')  \
    X(DT_F8E5M2, "f8e5m2", 8, 'F')  \
    X(DT_F16, "f16", 16, 'F')       \
    X(DT_BF16, "bf16", 16, 'F')     \
    X(DT_F32, "f32", 32, 'F')       \
    X(DT_F64, "f64", 64, 'F')       \
    X(DT_PTR, "ptr", 64, 'P')

typedef enum {
#define X(e, n, b, f) e,
    BLK_DTYPES(X)
#undef X
    DT_COUNT
} blk_dtype;

typedef struct {
    uint8_t dtype;     /* blk_dtype of each element */
    uint8_t pointee;   /* DT_PTR only: dtype pointed to */
    uint8_t rank;      /* 0 = scalar */
    bool ptr_const;    /* DT_PTR only: *const T (read-only) */
    int32_t shape[IR_MAX_RANK];
} ir_type;

const char *dtype_name(blk_dtype t);
int dtype_bits(blk_dtype t);          /* 1 for bool, 64 for pointers */
int dtype_bytes(blk_dtype t);         /* storage size in memory: bool is 1 byte */
bool dtype_is_float(blk_dtype t);
bool dtype_is_int(blk_dtype t);       /* signed or unsigned integer, not bool */
bool dtype_is_signed(blk_dtype t);    /* signed integers only */
bool dtype_is_unsigned(blk_dtype t);
/* Look up a dtype by its source name ("f32", "bf16", ...; not "ptr"). -1 if none. */
int dtype_from_name(const char *name);

ir_type ir_scalar(blk_dtype t);
ir_type ir_ptr(blk_dtype pointee, bool is_const);
/* The same element type with another shape (rank 0 gives the scalar). */
ir_type ir_shaped(ir_type elem, int rank, const int32_t *shape);
ir_type ir_elem(ir_type t);           /* drop the shape */
bool ir_type_eq(ir_type a, ir_type b);
bool ir_shape_eq(ir_type a, ir_type b);
int64_t ir_numel(ir_type t);          /* 1 for scalars */
bool ir_is_block(ir_type t);
/* "f32", "*f32", "*const bf16", "i32[128, 64]", "*f32[1024]" */
void ir_type_str(ir_type t, char *buf, int size);

#endif
