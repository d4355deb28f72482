/* Atomics between programs on the interpreter (tests/gpu/atomics.blk, also
 * a GPU-suite file): a ticket lock around plain read-modify-writes of a
 * shared block, and message passing along a chain of programs. The
 * interpreter runs programs one after another, so these check the
 * kernels' results and that sem/scope are accepted; the GPU suite checks
 * the ordering itself. */
#include "harness.h"

#define B 256

int main(int argc, char **argv) {
    h_init(argc, argv);
    enum { P = 37, Q = 20 };
    int32_t lock[2] = {0, 0}, block[B] = {0}, count = 0;
    blkc_ctx *c = h_build(h_testdir, "../gpu/atomics.blk", "ticket_lock", NULL);
    blk_arg args[] = {BLK_PTR(lock, sizeof lock), BLK_PTR(block, sizeof block), BLK_PTR(&count, sizeof count)};
    if (h_run(c, "ticket_lock", P, 1, 1, args, 3) == 0) {
        CHECK(count == P && lock[0] == P && lock[1] == P, "ticket_lock: count %d, lock %d %d", count, lock[0], lock[1]);
        for (int o = 0; o < B; o++) CHECK(block[o] == P * (o + 1), "ticket_lock: block[%d] = %d", o, block[o]);
    }
    blkc_free(c);

    int32_t ticket = 0, flags[Q] = {0}, *data = calloc(Q * B, sizeof *data);
    c = h_build(h_testdir, "../gpu/atomics.blk", "message_pass", NULL);
    blk_arg margs[] = {BLK_PTR(&ticket, sizeof ticket), BLK_PTR(flags, sizeof flags), BLK_PTR(data, Q * B * sizeof *data)};
    if (h_run(c, "message_pass", Q, 1, 1, margs, 3) == 0)
        for (int id = 0; id < Q; id++) {
            CHECK(flags[id] == 1, "message_pass: flag %d", id);
            for (int o = 0; o < B; o++) {
                int32_t want = (id + 1) * o + id * (id + 1) / 2;
                CHECK(data[id * B + o] == want, "message_pass: data[%d][%d] = %d, want %d", id, o, data[id * B + o], want);
            }
        }
    free(data);
    blkc_free(c);
    return test_finish("test_atomics");
}
