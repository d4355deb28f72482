/* clone.h — copying Block IR with a value map.
 *
 * Inlining, loop unrolling and software pipelining all copy a region's insts
 * somewhere else while renaming values: the callee's parameters become the
 * call's operands, an induction variable becomes a constant, and so on. The
 * value map says what each old value is called in the copy; the cloner fills
 * in the results (and the args of nested regions) of everything it copies.
 *
 *   ir_value_map *map = ir_value_map_new(arena);
 *   ir_value_map_set(map, callee_param, call_operand);   // caller maps args
 *   ir_inst *ret = ir_clone_insts(call->parent, call, callee->body, map, true);
 *   // ret is the callee's (uncloned) terminator: map its operands to get the
 *   // values that replace the call's results.
 *
 * The map is keyed by value pointer (not by id: ids are scratch numbers that
 * new values do not share), lives in the arena and is never freed.
 */
#ifndef BLK_CLONE_H
#define BLK_CLONE_H

#include "ir.h"

typedef struct ir_value_map ir_value_map;

ir_value_map *ir_value_map_new(blk_arena *a);
void ir_value_map_set(ir_value_map *m, ir_value *from, ir_value *to);
/* What `v` is mapped to, or NULL. */
ir_value *ir_value_map_get(const ir_value_map *m, const ir_value *v);
/* Follows the map until a value with no mapping (v itself if unmapped). */
ir_value *ir_value_map_resolve(const ir_value_map *m, ir_value *v);

/* A detached copy of inst i (nested regions included) for function f; its
 * operands are mapped through m (unmapped ones are kept), and m learns the
 * copy's results and region args. Attributes, loc and name hints are copied. */
ir_inst *ir_clone_inst(ir_func *f, const ir_inst *i, ir_value_map *m);

/* Copies the insts of src, in order, into region dst in front of `pos` (at
 * the end when pos is NULL). src's args must be mapped by the caller. When
 * skip_terminator, the region's final terminator is not copied and is
 * returned (uncloned) so the caller can read its operands through m;
 * otherwise returns the copy of the last inst. NULL if src is empty. */
ir_inst *ir_clone_insts(ir_region *dst, ir_inst *pos, const ir_region *src, ir_value_map *m,
                        bool skip_terminator);

#endif
