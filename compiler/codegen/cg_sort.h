/* cg_sort.h — what cg_sort_keys.c (the integer sort keys: format, encoding,
 * compare, keys in shared memory) gives cg_sort.c (the bitonic networks and
 * topk rounds). Private to those two files; cg_sort_keys.c's header comment
 * has the key layout. */
#ifndef BLK_CG_SORT_H
#define BLK_CG_SORT_H

#include "cg_internal.h"

/* The key format of one sort or topk. */
typedef struct {
    blk_dtype t;
    bool desc;
    int w;              /* value bits (bool: 1) */
    int ib, pb;         /* index bits and payload bits in hi */
    bool lo, aux;       /* separate index / value bits */
    LLVMTypeRef vt, ht; /* iw; hi's type (i32 or i64) */
} sk_fmt;

typedef struct {
    LLVMValueRef hi, lo, aux; /* lo, aux: NULL unless the format has them */
} sk_key;

/* Keys in shared memory: one array per field. */
typedef struct {
    LLVMValueRef hi, lo, aux;
} sk_smem;

int sk_log2(int64_t v); /* ceil(log2 v) */
sk_fmt sk_format(cg_ctx *C, blk_dtype t, bool desc, bool index, int32_t S);
/* the key of element x at position pos (i32) along the axis, and back */
sk_key sk_encode(cg_ctx *C, const sk_fmt *F, LLVMValueRef x, LLVMValueRef pos);
LLVMValueRef sk_decode_value(cg_ctx *C, const sk_fmt *F, sk_key k);
LLVMValueRef sk_decode_index(cg_ctx *C, const sk_fmt *F, sk_key k);
LLVMValueRef sk_before(cg_ctx *C, const sk_fmt *F, sk_key a, sk_key b); /* i1: a strictly before b */
sk_key sk_pick(cg_ctx *C, LLVMValueRef c, sk_key a, sk_key b);          /* c ? a : b */
void sk_order_pair(cg_ctx *C, const sk_fmt *F, sk_key *a, sk_key *b, LLVMValueRef asc, LLVMValueRef on);
sk_key sk_shfl_key(cg_ctx *C, sk_key k, LLVMValueRef mask); /* butterfly shuffle of every field */

LLVMValueRef sk_byte_offset(cg_ctx *C, LLVMValueRef base, int64_t off);
int sk_type_bytes(LLVMTypeRef t);
sk_smem sk_smem_keys(cg_ctx *C, blk_loc loc, const sk_fmt *F, int64_t count); /* room for count keys */
LLVMValueRef sk_slot(cg_ctx *C, LLVMValueRef arr, LLVMTypeRef t, LLVMValueRef i);
void sk_store_key(cg_ctx *C, const sk_fmt *F, const sk_smem *M, LLVMValueRef i, sk_key k);
sk_key sk_load_key(cg_ctx *C, const sk_fmt *F, const sk_smem *M, LLVMValueRef i);

#endif
