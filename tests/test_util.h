/* test_util.h — what every C test program shares: one failure count, checks
 * that report and go on, and the closing line.
 *
 *   CHECK(cond)                 on failure: "FILE:LINE: check failed: cond"
 *   CHECK(cond, fmt, ...)       on failure: "FILE:LINE: " and the message
 *   CHECK_TEXT(got, want)       two strings equal, both printed if not
 *   return test_finish("name"); "name: ok" on stdout, exit status 0; or
 *                               "name: N failure(s)" on stderr, status 1
 *   test_read_file(path, &len)  a file's text (malloc'd, NUL-terminated)
 *
 * The message's arguments are evaluated only when the check fails. A test
 * that fails in bulk (an exhaustive sweep) may define TEST_REPORT_LIMIT
 * before including this to print only its first failures; all are counted.
 * Helpers of one test family (runtime/rt_test.h, unit/test_interp_util.h,
 * interp/harness.h) include this and add their own fixtures. */
#ifndef BLK_TEST_UTIL_H
#define BLK_TEST_UTIL_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TEST_REPORT_LIMIT
#define TEST_REPORT_LIMIT INT_MAX
#endif

__attribute__((unused)) static int failures; /* unused where a program takes only test_read_file */

/* CHECK with one argument or with a message: picked by the argument count
 * (up to 32 message arguments). */
#define CHECK(...)                                                                                                   \
    TEST_PICK_(__VA_ARGS__, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_,     \
               CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_,       \
               CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_,       \
               CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_, CHECK_MSG_,       \
               CHECK_MSG_, CHECK_MSG_, CHECK_COND_, unused_)(__VA_ARGS__)
#define TEST_PICK_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, _21,    \
                   _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, _33, _34, name, ...)                       \
    name

#define CHECK_COND_(cond)                                                                  \
    do {                                                                                   \
        if (!(cond) && failures++ < TEST_REPORT_LIMIT)                                     \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);        \
    } while (0)

#define CHECK_MSG_(cond, ...)                                   \
    do {                                                        \
        if (!(cond) && failures++ < TEST_REPORT_LIMIT) {        \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);     \
            fprintf(stderr, __VA_ARGS__);                       \
            fputc('\n', stderr);                                \
        }                                                       \
    } while (0)

#define CHECK_TEXT(got, want) test_check_text_((got), (want), __FILE__, __LINE__)

__attribute__((unused)) static void test_check_text_(const char *got, const char *want, const char *file, int line) {
    if (strcmp(got, want) == 0) return;
    fprintf(stderr, "%s:%d: text differs\n--- got:\n%s--- want:\n%s", file, line, got, want);
    failures++;
}

__attribute__((unused)) static int test_finish(const char *name) {
    if (failures) {
        fprintf(stderr, "%s: %d failure(s)\n", name, failures);
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}

/* A file's text, NUL-terminated (malloc'd; NULL if it cannot be read);
 * *len its length where len is not NULL. */
__attribute__((unused)) static char *test_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    fclose(f);
    if (s) s[n] = 0;
    if (s && len) *len = (size_t)n;
    return s;
}

#endif
