#!/bin/sh
# sema_layers.sh SRCDIR — the layering of compiler/sema (sema/scope.h says
# why): scope -> types -> expr -> builtin -> stmt -> item, each layer calling
# only the ones below. Checked through the #includes: a layer's header
# includes the header just below it and no other sema header; a .c file
# includes its own layer's header only (so a call upward would not compile);
# outside compiler/sema only sema/sema.h (the public entry) is included,
# besides unit tests. Fails naming each include that breaks the rule.
src=${1:-.}; dir=$src/compiler/sema
fail=0
layer_of() { # FILE -> its layer header
  case $(basename "$1") in
    scope.*) echo scope.h ;;
    types.*) echo types.h ;;
    expr.*) echo expr.h ;;
    builtin*) echo builtin.h ;;
    stmt.*) echo stmt.h ;;
    module.c|call.c|kernel.c|sema.c|item.h) echo item.h ;;
    sema.h) echo sema.h ;;
    *) echo "?" ;;
  esac
}
below() { # HEADER -> the header it may include
  case $1 in
    types.h) echo scope.h ;; expr.h) echo types.h ;; builtin.h) echo expr.h ;;
    stmt.h) echo builtin.h ;; item.h) echo stmt.h ;; scope.h) echo sema.h ;; *) echo "" ;;
  esac
}
for f in "$dir"/*.c "$dir"/*.h; do
  own=$(layer_of "$f")
  [ "$own" = "?" ] && { echo "FAIL: $f: not in a layer (add it to tests/tools/sema_layers.sh)"; fail=1; continue; }
  for inc in $(sed -n 's|^#include "sema/\([a-z_]*\.[a-z]*\)".*|\1|p' "$f"); do
    [ "$inc" = builtins.def ] && continue # the builtin table: data, read by scope.c and builtin.*
    case $f in
      *.c) ok=$own ;;
      *) ok=$(below "$(basename "$f")") ;;
    esac
    [ "$inc" = "$ok" ] || { echo "FAIL: $f includes sema/$inc (its layer allows sema/$ok)"; fail=1; }
  done
done
for f in $(find "$src/compiler" "$src/runtime" -name '*.[ch]' ! -path "$dir/*"); do
  for inc in $(sed -n 's|^#include "sema/\([a-z_]*\.[a-z]*\)".*|\1|p' "$f"); do
    [ "$inc" = sema.h ] || { echo "FAIL: $f includes sema/$inc (outside sema: sema/sema.h only)"; fail=1; }
  done
done
[ $fail = 0 ] && echo "sema layers: ok"
exit $fail
