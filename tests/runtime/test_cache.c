/* test_cache — the JIT disk cache (runtime/cache.c) around a fake compiler
 * hook on the fake GPU: SHA-256 known answers, canonical keys, hits and
 * misses, corrupted / torn / foreign entries recompiled, imports tracked,
 * compile errors not cached, concurrent loads of one source from 8 threads;
 * entries of another format, planted symlinks, modes, directories others
 * may write into; writers in 4 processes damaging and replacing entries. */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache.h"
#include "fake_cuda.h"
#include "rt_test.h"

static fake_api F;
static blkrt_device *d;
static atomic_int compiles;
static char dep_path[512]; /* reported as an import when set */

static char *sdup(const char *s) {
    char *r = malloc(strlen(s) + 1);
    strcpy(r, s);
    return r;
}

static blkrt_status fake_compile(const blkrt_compile_request *req, blkrt_compile_result *res) {
    atomic_fetch_add(&compiles, 1);
    if (strstr(req->source, "syntax error")) {
        res->log = sdup("x.blk:1:8: error: syntax error");
        return BLKRT_ERR_COMPILE;
    }
    long long block = 1024;
    for (int i = 0; i < req->ndefines; i++)
        if (strcmp(req->defines[i].name, "BLOCK") == 0) block = req->defines[i].ival;
    char *ptx = malloc(4096);
    snprintf(ptx, 4096,
             "%s// blk-meta v1 kernel=vector_add entry=vector_add num_warps=4 shared=0 "
             "params=x:*f32,y:*f32,out:*f32,n:i32 consts=BLOCK:i32:%lld\n%s// source: %s\n",
             PTX_HEAD, block, PTX_ENTRY("vector_add", VADD_PARAMS), req->source);
    res->text = ptx;
    res->len = strlen(ptx);
    if (dep_path[0]) {
        res->deps = malloc(sizeof(char *));
        res->deps[0] = sdup(dep_path);
        res->ndeps = 1;
    }
    return BLKRT_OK;
}

static const blkrt_compiler fake_compiler = {.version = "fake-compiler 1", .compile_ptx = fake_compile};
static const blkrt_compiler no_ptx_compiler = {.version = "cpu-only 1"};

static char dir[256];

static blkrt_status load(const char *src, const char *cache_dir, int64_t block, blkrt_module **out) {
    blkrt_define def = {.name = "BLOCK", .ival = block};
    blkrt_source_options o = {.path = "x.blk", .defines = &def, .ndefines = 1, .cache_dir = cache_dir};
    return blkrt_module_load_source(d, src, strlen(src), &o, out);
}

/* Load, check the module works, unload. */
static void load_ok(const char *src, const char *cache_dir, int64_t block) {
    blkrt_module *m = NULL;
    blkrt_kernel *k;
    OK(load(src, cache_dir, block, &m));
    if (!m) return;
    int64_t b = 0;
    OK(blkrt_module_kernel(m, "vector_add", &k));
    OK(blkrt_kernel_const_int(k, "BLOCK", &b));
    CHECK(b == block, "BLOCK %lld from the (cached) PTX", (long long)b);
    OK(blkrt_module_unload(m));
}

static int count_files(const char *prefix) {
    DIR *dd = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (dd && (e = readdir(dd)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) n++;
    if (dd) closedir(dd);
    return n;
}

static void entry_path(const char *src, int64_t block, char *buf, size_t n) {
    blkrt_define def = {.name = "BLOCK", .ival = block};
    blkrt_compile_request req = {.source = src, .len = strlen(src), .path = "x.blk", .defines = &def, .ndefines = 1,
                                 .arch = "sm_90a"};
    rt_cache_key k;
    rt_cache_key_compute(fake_compiler.version, "ptx", &req, &k);
    rt_cache_entry_path(dir, &k, buf, n);
}

static void sha256(void) {
    char hex[65];
    rt_sha256_hex("", 0, hex);
    CHECK(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0, "sha256('')");
    rt_sha256_hex("abc", 3, hex);
    CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0, "sha256('abc')");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    rt_sha256_hex(m, strlen(m), hex);
    CHECK(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0, "sha256 56 bytes");
    /* a million 'a', fed in uneven pieces */
    static char a[1000000];
    memset(a, 'a', sizeof a);
    rt_sha256 s;
    unsigned char dg[32];
    rt_sha256_init(&s);
    for (size_t off = 0, step = 1; off < sizeof a; off += step, step = step * 3 % 1000 + 1)
        rt_sha256_update(&s, a + off, off + step > sizeof a ? sizeof a - off : step);
    rt_sha256_final(&s, dg);
    rt_sha256_digest_hex(dg, hex);
    CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0, "sha256 1M 'a'");
}

static void keys(void) {
    blkrt_define d1[] = {{.name = "A", .ival = 1}, {.name = "B", .is_float = 1, .fval = 0.5}};
    blkrt_define d2[] = {{.name = "B", .is_float = 1, .fval = 0.5}, {.name = "A", .ival = 1}};
    blkrt_define d3[] = {{.name = "A", .ival = 7}, {.name = "B", .is_float = 1, .fval = 0.5}, {.name = "A", .ival = 1}};
    blkrt_define d4[] = {{.name = "A", .ival = 2}, {.name = "B", .is_float = 1, .fval = 0.5}};
    blkrt_compile_request r = {.source = "src", .len = 3, .path = "p.blk", .defines = d1, .ndefines = 2, .arch = "sm_90a"};
    rt_cache_key base, k;
    rt_cache_key_compute("v1", "ptx", &r, &base);
    CHECK(strlen(base.hex) == 64, "hex key");
    r.defines = d2;
    rt_cache_key_compute("v1", "ptx", &r, &k);
    CHECK(strcmp(k.hex, base.hex) == 0, "define order does not matter");
    r.defines = d3;
    r.ndefines = 3;
    rt_cache_key_compute("v1", "ptx", &r, &k);
    CHECK(strcmp(k.hex, base.hex) == 0, "a repeated define: the last counts");
    r.defines = d4;
    r.ndefines = 2;
    rt_cache_key_compute("v1", "ptx", &r, &k);
    CHECK(strcmp(k.hex, base.hex) != 0, "a define's value matters");
    r.defines = d1;
    rt_cache_key_compute("v2", "ptx", &r, &k);
    CHECK(strcmp(k.hex, base.hex) != 0, "compiler version matters");
    r.arch = "sm_80";
    rt_cache_key_compute("v1", "ptx", &r, &k);
    CHECK(strcmp(k.hex, base.hex) != 0, "arch matters");
    r.arch = "sm_90a";
    r.kernel = "k";
    rt_cache_key_compute("v1", "ptx", &r, &k);
    CHECK(strcmp(k.hex, base.hex) != 0, "kernel selection matters");
    r.kernel = NULL;
    r.path = "q.blk";
    rt_cache_key_compute("v1", "ptx", &r, &k);
    CHECK(strcmp(k.hex, base.hex) != 0, "path matters (imports resolve next to it)");
    r.path = "p.blk";
    r.source = "srd";
    rt_cache_key_compute("v1", "ptx", &r, &k);
    CHECK(strcmp(k.hex, base.hex) != 0, "source matters");
    r.source = "src";
    rt_cache_key_compute("v1", "meta", &r, &k);
    CHECK(strcmp(k.hex, base.hex) != 0, "what the entry holds matters (a lazy load's description, PTX)");
    /* one entry per variant: none (every default variant), "" and each spec differ */
    rt_cache_key v0, v1;
    r.variant = "";
    rt_cache_key_compute("v1", "ptx", &r, &v0);
    r.variant = "x=d16,n=eq1";
    rt_cache_key_compute("v1", "ptx", &r, &v1);
    CHECK(strcmp(v0.hex, base.hex) != 0 && strcmp(v1.hex, base.hex) != 0 && strcmp(v0.hex, v1.hex) != 0,
          "the variant matters");
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void hits_and_misses(void) {
    const char *src = "kernel vector_add(...) { /* one */ }";
    char entry[600];
    entry_path(src, 256, entry, sizeof entry);
    atomic_store(&compiles, 0);
    load_ok(src, dir, 256);
    CHECK(compiles == 1, "first load compiles");
    CHECK(access(entry, R_OK) == 0, "entry written at %s", entry);
    load_ok(src, dir, 256);
    load_ok(src, dir, 256);
    CHECK(compiles == 1, "later loads hit the cache (%d compiles)", compiles);
    load_ok(src, dir, 128);
    CHECK(compiles == 2, "another define: another entry");
    CHECK(count_files(".tmp-") == 0, "no temporary files left");
    CHECK(count_files("") - 2 == 2, "two entries"); /* minus . and .. */

    /* Corrupt payload byte: detected by the checksum, recompiled, rewritten. */
    FILE *f = fopen(entry, "r+b");
    CHECK(f != NULL, "open entry");
    if (f) {
        fseek(f, -3, SEEK_END);
        fputc('#', f);
        fclose(f);
    }
    load_ok(src, dir, 256);
    CHECK(compiles == 3, "corrupt entry recompiled");
    load_ok(src, dir, 256);
    CHECK(compiles == 3, "and rewritten whole");
    /* Torn (truncated) entry. */
    struct stat st;
    stat(entry, &st);
    CHECK(truncate(entry, st.st_size / 2) == 0, "truncate");
    load_ok(src, dir, 256);
    CHECK(compiles == 4, "torn entry recompiled");
    /* Not an entry at all. */
    write_file(entry, "hello\n");
    load_ok(src, dir, 256);
    CHECK(compiles == 5, "garbage entry recompiled");
    write_file(entry, "blk-cache v1\npayload 99999999999999999999 zz\nend\n");
    load_ok(src, dir, 256);
    CHECK(compiles == 6, "bad header recompiled");
    /* An entry others may write is not trusted. */
    CHECK(chmod(entry, 0666) == 0, "chmod");
    load_ok(src, dir, 256);
    CHECK(compiles == 7, "world-writable entry ignored");
    load_ok(src, dir, 256);
    CHECK(compiles == 7, "replaced by a private one");

    /* No cache: "" as the option, or BLKRT_CACHE_DIR="" (the test environment). */
    load_ok(src, "", 256);
    load_ok(src, NULL, 256);
    CHECK(compiles == 9, "uncached loads compile every time");
    setenv("BLKRT_CACHE_DIR", dir, 1);
    load_ok(src, NULL, 256);
    CHECK(compiles == 9, "BLKRT_CACHE_DIR names the cache");
    setenv("BLKRT_CACHE_DIR", "", 1);

    /* An unusable cache directory costs compiles, not failures. */
    char blocked[300];
    snprintf(blocked, sizeof blocked, "%s/a-file", dir);
    write_file(blocked, "x");
    char under[320];
    snprintf(under, sizeof under, "%s/sub", blocked);
    load_ok(src, under, 256);
    load_ok(src, under, 256);
    CHECK(compiles == 11, "no cache under a file");
    unlink(blocked);
}

static void deps(void) {
    const char *src = "import \"helpers.blk\"; kernel vector_add(...) {}";
    snprintf(dep_path, sizeof dep_path, "%s-helpers.blk", dir);
    write_file(dep_path, "fn helper() { return 1; }\n");
    atomic_store(&compiles, 0);
    load_ok(src, dir, 64);
    load_ok(src, dir, 64);
    CHECK(compiles == 1, "hit while the import is unchanged");
    write_file(dep_path, "fn helper() { return 2; }\n");
    load_ok(src, dir, 64);
    CHECK(compiles == 2, "the import changed: recompiled");
    load_ok(src, dir, 64);
    CHECK(compiles == 2, "then a hit again");
    unlink(dep_path);
    load_ok(src, dir, 64);
    CHECK(compiles == 3, "the import is gone: recompiled (the compiler decides)");
    dep_path[0] = 0;
}

static void errors(void) {
    blkrt_module *m = NULL;
    int files = count_files("");
    atomic_store(&compiles, 0);
    FAILS_EXACTLY(load("kernel syntax error", dir, 64, &m), BLKRT_ERR_COMPILE,
                  "x.blk: compiling for sm_90a failed:\nx.blk:1:8: error: syntax error");
    FAILS(load("kernel syntax error", dir, 64, &m), BLKRT_ERR_COMPILE, "syntax error");
    CHECK(compiles == 2 && count_files("") == files, "errors are not cached");
    OK(blkrt_use_compiler(&no_ptx_compiler));
    FAILS_EXACTLY(load("kernel k() {}", dir, 64, &m), BLKRT_ERR_UNSUPPORTED,
                  "x.blk: the registered compiler (version cpu-only 1) cannot generate PTX yet; load it on "
                  "BLKRT_DEVICE_CPU");
    FAILS(blkrt_use_compiler(&(blkrt_compiler){0}), BLKRT_ERR_INVALID_VALUE, "no version");
    OK(blkrt_use_compiler(NULL));
    FAILS(load("kernel k() {}", dir, 64, &m), BLKRT_ERR_NO_COMPILER, "no compiler linked");
    OK(blkrt_use_compiler(&fake_compiler));
    blkrt_define nameless = {0};
    blkrt_source_options o = {.defines = &nameless, .ndefines = 1};
    FAILS(blkrt_module_load_source(d, "x", 1, &o, &m), BLKRT_ERR_INVALID_VALUE, "define 0 has no name");
}

static void *racer(void *arg) {
    (void)arg;
    blkrt_module *m = NULL;
    blkrt_status s = load("kernel vector_add(...) { /* race */ }", dir, 512, &m);
    if (s == BLKRT_OK) s = blkrt_module_unload(m);
    return (void *)(intptr_t)s;
}

static void concurrent(void) {
    atomic_store(&compiles, 0);
    pthread_t t[8];
    for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, racer, NULL);
    for (int i = 0; i < 8; i++) {
        void *r;
        pthread_join(t[i], &r);
        CHECK(r == NULL, "thread %d: %s", i, blkrt_status_name((blkrt_status)(intptr_t)r));
    }
    CHECK(compiles >= 1 && compiles <= 8, "%d compiles", compiles);
    int before = compiles;
    load_ok("kernel vector_add(...) { /* race */ }", dir, 512);
    CHECK(compiles == before, "the raced entry is whole and valid");
    CHECK(count_files(".tmp-") == 0, "no temporary files left");
}

/* Entries of another format, symlinks planted under an entry's name,
 * modes, and directories that others could write into. */
static void hostile(void) {
    const char *src = "kernel vector_add(...) { /* hostile */ }";
    char entry[600], text[256];
    entry_path(src, 64, entry, sizeof entry);
    atomic_store(&compiles, 0);
    load_ok(src, dir, 64);
    struct stat st;
    CHECK(lstat(entry, &st) == 0 && (st.st_mode & 0777) == 0600, "entries are 0600 (%o)", st.st_mode & 0777);

    /* Another format version (an older or newer runtime's): recompiled, rewritten in ours. */
    write_file(entry, "blk-cache v2\npayload 3 0000000000000000000000000000000000000000000000000000000000000000\nend\nabc");
    load_ok(src, dir, 64);
    CHECK(compiles == 2, "a foreign format is recompiled");
    FILE *f = fopen(entry, "rb");
    CHECK(f && fgets(text, sizeof text, f) && strcmp(text, "blk-cache v1\n") == 0, "rewritten as v1");
    if (f) fclose(f);
    load_ok(src, dir, 64);
    CHECK(compiles == 2, "then a hit");

    /* A symlink planted under the entry's name, pointing at a valid entry
     * elsewhere: never followed (a miss), replaced by a file of our own, and
     * its target left alone. */
    char target[600];
    snprintf(target, sizeof target, "%s-planted", dir);
    CHECK(rename(entry, target) == 0, "move the entry away");
    CHECK(symlink(target, entry) == 0, "plant a symlink");
    load_ok(src, dir, 64);
    CHECK(compiles == 3, "the symlink was not followed");
    CHECK(lstat(entry, &st) == 0 && S_ISREG(st.st_mode), "the entry is a regular file again");
    CHECK(lstat(target, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600, "the target is untouched");
    unlink(target);

    /* A directory the cache creates is 0700; one others may write into
     * without the sticky bit, or another user's, is not used at all. */
    char sub[600];
    snprintf(sub, sizeof sub, "%s/made/here", dir);
    load_ok(src, sub, 64);
    CHECK(stat(sub, &st) == 0 && (st.st_mode & 0777) == 0700, "created 0700 (%o)", st.st_mode & 0777);
    CHECK(compiles == 4, "a new directory: a miss");
    CHECK(chmod(sub, 0777) == 0, "chmod 0777");
    load_ok(src, sub, 64);
    load_ok(src, sub, 64);
    CHECK(compiles == 6, "a world-writable directory is not used (%d compiles)", compiles);
    CHECK(chmod(sub, 01777) == 0, "chmod 01777");
    load_ok(src, sub, 64);
    CHECK(compiles == 6, "sticky (like /tmp): used");
    CHECK(chmod(sub, 0770) == 0, "chmod 0770");
    load_ok(src, sub, 64);
    CHECK(compiles == 7, "group-writable: not used");
    CHECK(chmod(sub, 0700) == 0, "chmod 0700");
    if (geteuid() == 0) {
        CHECK(chown(sub, 65534, 65534) == 0, "chown");
        load_ok(src, sub, 64);
        CHECK(compiles == 8, "another user's directory: not used");
        CHECK(chown(sub, 0, 0) == 0, "chown back");
    }
    char p[700];
    snprintf(p, sizeof p, "%s/made/here", dir);
    DIR *dd = opendir(p);
    for (struct dirent *e; dd && (e = readdir(dd));) {
        char q[1000];
        snprintf(q, sizeof q, "%s/%s", p, e->d_name);
        if (e->d_name[0] != '.') unlink(q);
    }
    if (dd) closedir(dd);
    rmdir(p);
    snprintf(p, sizeof p, "%s/made", dir);
    rmdir(p);
}

/* Writers in several processes: each loads a shared source and one of its
 * own over and over, compiling on misses and replacing entries under the
 * others' reads. Every load must succeed and every entry end whole. */
static void processes(void) {
    enum { P = 4, ROUNDS = 25 };
    pid_t pid[P];
    for (int i = 0; i < P; i++) {
        if ((pid[i] = fork()) == 0) {
            char own[96];
            snprintf(own, sizeof own, "kernel vector_add(...) { /* process %d */ }", i);
            int bad = 0;
            for (int r = 0; r < ROUNDS; r++) {
                blkrt_module *m = NULL;
                const char *src = r % 2 ? own : "kernel vector_add(...) { /* shared by processes */ }";
                if (r % 5 == 0) { /* damage the shared entry now and then */
                    char e[600];
                    entry_path("kernel vector_add(...) { /* shared by processes */ }", 32, e, sizeof e);
                    if (truncate(e, 40) != 0) { /* not there yet: nothing to damage */ }
                }
                if (load(src, dir, 32, &m) != BLKRT_OK || blkrt_module_unload(m) != BLKRT_OK) bad++;
            }
            _exit(bad ? 1 : 0);
        }
    }
    for (int i = 0; i < P; i++) {
        int status = 0;
        CHECK(pid[i] > 0 && waitpid(pid[i], &status, 0) == pid[i] && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "process %d: every load succeeded (status %d)", i, status);
    }
    atomic_store(&compiles, 0);
    load_ok("kernel vector_add(...) { /* shared by processes */ }", dir, 32);
    for (int i = 0; i < P; i++) {
        char own[96];
        snprintf(own, sizeof own, "kernel vector_add(...) { /* process %d */ }", i);
        load_ok(own, dir, 32);
    }
    CHECK(compiles <= 1, "the entries are whole (%d of %d recompiled: only the shared one may be torn by the last "
          "damage)", compiles, P + 1);
    CHECK(count_files(".tmp-") == 0, "no temporary files left");
}

static void rm_dir(void) {
    DIR *dd = opendir(dir);
    struct dirent *e;
    char p[600];
    while (dd && (e = readdir(dd))) {
        if (e->d_name[0] == '.' && (e->d_name[1] == 0 || (e->d_name[1] == '.' && e->d_name[2] == 0))) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (dd) closedir(dd);
    rmdir(dir);
}

int main(void) {
    if (fake_api_load(&F) != 0) return 1;
    if (blkrt_device_open(0, &d) != BLKRT_OK) return 1;
    snprintf(dir, sizeof dir, "/tmp/blkrt-cache-test-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    OK(blkrt_use_compiler(&fake_compiler));
    sha256();
    keys();
    hits_and_misses();
    deps();
    errors();
    concurrent();
    hostile();
    processes();
    OK(blkrt_use_compiler(NULL));
    OK(blkrt_device_close(d));
    rm_dir();
    return test_finish("test_cache");
}
