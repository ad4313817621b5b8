/*
 * Output files (src/util/u_file.h): a file appears only whole, and a failed write (a full
 * disk, a read-only folder, a device) leaves what was at the path untouched and creates
 * nothing. The full disk is a file size limit (RLIMIT_FSIZE), which fails writes the same
 * way (EFBIG) without needing a full file system.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/u_file.h"

static char g_dir[1024]; /* a fresh scratch folder per test */

static int
setup_dir(void **state)
{
    (void)state;
    static int count;
    char base[512];
    snprintf(base, sizeof base, "%s/tests/util/tmp", EMBODY_BINARY_DIR);
    mkdir(base, 0777);
    snprintf(g_dir, sizeof g_dir, "%s/%d-%d", base, (int)getpid(), ++count);
    return mkdir(g_dir, 0777);
}

static int
teardown_dir(void **state)
{
    (void)state;
    chmod(g_dir, 0777);
    DIR *d = opendir(g_dir);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char p[2048];
            snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    return rmdir(g_dir);
}

static int
entry_count(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void
write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void
expect_text(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("%s: %s", path, strerror(errno));
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (strcmp(buf, text) != 0)
        fail_msg("%s holds \"%s\", expected \"%s\"", path, buf, text);
}

static void
a_new_file_appears_only_when_committed(void **state)
{
    (void)state;
    char path[1100];
    snprintf(path, sizeof path, "%s/new.csv", g_dir);
    struct u_out_file *f = NULL;
    struct em_error err = {{0}};
    assert_int_equal(u_out_file_open(path, &f, &err), EM_OK);
    fputs("hello\n", f->file);
    assert_false(access(path, F_OK) == 0); /* not yet */
    assert_int_equal(u_out_file_commit(&f, &err), EM_OK);
    assert_null(f);
    expect_text(path, "hello\n");
    assert_int_equal(entry_count(g_dir), 1); /* no temporary file left */
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    const mode_t mask = umask(0);
    umask(mask);
    assert_int_equal(st.st_mode & 0777, 0666 & ~mask);
}

static void
an_existing_file_keeps_its_mode_and_owner_and_is_replaced_whole(void **state)
{
    (void)state;
    char path[1100];
    snprintf(path, sizeof path, "%s/old.csv", g_dir);
    write_text(path, "old\n");
    assert_int_equal(chmod(path, 0640), 0);
    /* Root replacing another user's file gives it back to that user. */
    const uid_t owner = geteuid() == 0 ? 65534 : geteuid();
    if (geteuid() == 0)
        assert_int_equal(chown(path, owner, 65534), 0);
    struct em_error err = {{0}};
    assert_int_equal(u_file_write_all(path, "new\n", 4, &err), EM_OK);
    expect_text(path, "new\n");
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_int_equal(st.st_uid, owner);
    assert_int_equal(entry_count(g_dir), 1);
}

static void
an_abandoned_write_leaves_the_old_file(void **state)
{
    (void)state;
    char path[1100];
    snprintf(path, sizeof path, "%s/old.csv", g_dir);
    write_text(path, "old\n");
    struct u_out_file *f = NULL;
    struct em_error err = {{0}};
    assert_int_equal(u_out_file_open(path, &f, &err), EM_OK);
    fputs("half", f->file);
    u_out_file_abort(&f);
    assert_null(f);
    expect_text(path, "old\n");
    assert_int_equal(entry_count(g_dir), 1);
}

/* Writes 1 MB to `path` with files limited to 4 KB: the disk is "full". */
static enum em_result
write_with_a_full_disk(const char *path, struct em_error *err)
{
    struct rlimit old;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    struct rlimit small = {.rlim_cur = 4096, .rlim_max = old.rlim_max};
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    static char big[1 << 20];
    memset(big, 'x', sizeof big);
    const enum em_result r = u_file_write_all(path, big, sizeof big, err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, old_handler);
    return r;
}

static void
a_full_disk_leaves_an_existing_file_untouched(void **state)
{
    (void)state;
    char path[1100];
    snprintf(path, sizeof path, "%s/kept.csv", g_dir);
    write_text(path, "precious\n");
    struct em_error err = {{0}};
    assert_int_equal(write_with_a_full_disk(path, &err), EM_ERROR_IO);
    if (!strstr(err.message, path) || !strstr(err.message, "File too large"))
        fail_msg("unexpected message: %s", err.message);
    expect_text(path, "precious\n");
    assert_int_equal(entry_count(g_dir), 1);
}

static void
a_full_disk_creates_nothing(void **state)
{
    (void)state;
    char path[1100];
    snprintf(path, sizeof path, "%s/new.csv", g_dir);
    struct em_error err = {{0}};
    assert_int_equal(write_with_a_full_disk(path, &err), EM_ERROR_IO);
    assert_int_equal(entry_count(g_dir), 0);
}

static void
a_read_only_folder_leaves_an_existing_file_untouched(void **state)
{
    (void)state;
    char path[1100];
    snprintf(path, sizeof path, "%s/kept.csv", g_dir);
    write_text(path, "precious\n");
    assert_int_equal(chmod(g_dir, 0555), 0);
    /* In a child, as an ordinary user when the tests run as root (root may write
     * anywhere): exit 0 when the write was refused with the path named. */
    fflush(NULL);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(3);
        struct em_error err = {{0}};
        const enum em_result r = u_file_write_all(path, "new\n", 4, &err);
        _exit(r == EM_ERROR_IO && strstr(err.message, "Permission denied") ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    chmod(g_dir, 0777);
    expect_text(path, "precious\n");
    assert_int_equal(entry_count(g_dir), 1);
}

static void
a_device_is_written_in_place_and_never_removed(void **state)
{
    (void)state;
    struct stat before, after;
    assert_int_equal(stat("/dev/full", &before), 0);
    const int entries = entry_count("/dev");
    struct em_error err = {{0}};
    assert_int_equal(u_file_write_all("/dev/full", "x\n", 2, &err), EM_ERROR_IO);
    if (!strstr(err.message, "/dev/full") || !strstr(err.message, "No space left"))
        fail_msg("unexpected message: %s", err.message);
    assert_int_equal(stat("/dev/full", &after), 0);
    assert_true(S_ISCHR(after.st_mode));
    assert_true(after.st_rdev == before.st_rdev && after.st_ino == before.st_ino);
    assert_int_equal(entry_count("/dev"), entries);
    assert_int_equal(u_file_write_all("/dev/null", "x\n", 2, &err), EM_OK);
    assert_int_equal(stat("/dev/null", &after), 0);
    assert_true(S_ISCHR(after.st_mode));
}

static void
a_symbolic_link_is_kept_and_its_file_replaced(void **state)
{
    (void)state;
    char path[1100], link[1100];
    snprintf(path, sizeof path, "%s/real.csv", g_dir);
    snprintf(link, sizeof link, "%s/link.csv", g_dir);
    write_text(path, "old\n");
    assert_int_equal(symlink(path, link), 0);
    struct em_error err = {{0}};
    assert_int_equal(u_file_write_all(link, "new\n", 4, &err), EM_OK);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    expect_text(path, "new\n");
}

static void
a_folder_is_refused_as_an_output(void **state)
{
    (void)state;
    struct u_out_file *f = NULL;
    struct em_error err = {{0}};
    assert_int_equal(u_out_file_open(g_dir, &f, &err), EM_ERROR_IO);
    assert_null(f);
    assert_non_null(strstr(err.message, "is a folder"));
}

static void
the_same_file_is_recognised_under_another_name(void **state)
{
    (void)state;
    char path[1100], hard[1100], sym[1100], other[1100], dotted[1200];
    snprintf(path, sizeof path, "%s/a.bvh", g_dir);
    snprintf(hard, sizeof hard, "%s/b.bvh", g_dir);
    snprintf(sym, sizeof sym, "%s/c.bvh", g_dir);
    snprintf(other, sizeof other, "%s/d.bvh", g_dir);
    snprintf(dotted, sizeof dotted, "%s/../%s/./a.bvh", g_dir, strrchr(g_dir, '/') + 1);
    write_text(path, "x");
    write_text(other, "x");
    assert_int_equal(link(path, hard), 0);
    assert_int_equal(symlink(path, sym), 0);
    assert_true(u_file_same(path, hard));
    assert_true(u_file_same(path, sym));
    assert_true(u_file_same(path, dotted));
    assert_false(u_file_same(path, other));
    assert_false(u_file_same(path, "/nonexistent/a.bvh"));
}


/* A partial file (a recording) never replaces what appeared at its target while it was
 * written: it goes to the first free numbered name, which commit_as names. */
static void
a_partial_file_never_replaces_a_file_that_appeared(void **state)
{
    (void)state;
    char path[1100], numbered[1100], saved[1100];
    snprintf(path, sizeof path, "%s/rec.csv", g_dir);
    snprintf(numbered, sizeof numbered, "%s/rec.1.csv", g_dir);
    struct u_out_file *f = NULL;
    struct em_error err = {{0}};
    assert_int_equal(u_out_file_open_partial(path, &f, &err), EM_OK);
    fputs("rows\n", f->file);
    FILE *other = fopen(path, "w");
    assert_non_null(other);
    fputs("precious\n", other);
    fclose(other);
    assert_int_equal(u_out_file_commit_as(&f, saved, sizeof saved, &err), EM_OK);
    expect_text(path, "precious\n");
    expect_text(numbered, "rows\n");
    assert_string_equal(saved, numbered);
    assert_int_equal(entry_count(g_dir), 2); /* no partial or hidden file left */
}

/* A live run's partial file (locked) is not a leftover: a second writer leaves it and
 * fails with EBUSY; once its writer is gone (a crash), it is moved aside as before. */
static void
a_live_partial_file_is_left_alone_and_a_dead_one_moved_aside(void **state)
{
    (void)state;
    char path[1100], partial[1100], aside[1100];
    snprintf(path, sizeof path, "%s/rec.csv", g_dir);
    snprintf(partial, sizeof partial, "%s/rec.csv.partial", g_dir);
    snprintf(aside, sizeof aside, "%s/rec.csv.partial.1", g_dir);
    struct u_out_file *first = NULL, *second = NULL;
    struct em_error err = {{0}};
    assert_int_equal(u_out_file_open_partial(path, &first, &err), EM_OK);
    fputs("first\n", first->file);
    fflush(first->file);
    assert_true(u_file_partial_in_use(path));
    errno = 0;
    assert_int_not_equal(u_out_file_open_partial(path, &second, &err), EM_OK);
    assert_int_equal(errno, EBUSY);
    assert_null(second);
    assert_non_null(strstr(err.message, "another run"));
    assert_int_equal(access(aside, F_OK), -1);
    expect_text(partial, "first\n");
    assert_int_equal(u_out_file_commit(&first, &err), EM_OK);
    expect_text(path, "first\n");
    /* A partial file nobody holds: a crashed run's, moved aside. */
    FILE *left = fopen(partial, "w");
    assert_non_null(left);
    fputs("crashed\n", left);
    fclose(left);
    assert_false(u_file_partial_in_use(path));
    assert_int_equal(u_out_file_open_partial(path, &second, &err), EM_OK);
    assert_string_equal(second->leftover, aside);
    expect_text(aside, "crashed\n");
    u_out_file_abort(&second);
}

int
main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup_dir, teardown_dir)
    const struct CMUnitTest tests[] = {
        T(a_new_file_appears_only_when_committed),
        T(an_existing_file_keeps_its_mode_and_owner_and_is_replaced_whole),
        T(an_abandoned_write_leaves_the_old_file),
        T(a_full_disk_leaves_an_existing_file_untouched),
        T(a_full_disk_creates_nothing),
        T(a_read_only_folder_leaves_an_existing_file_untouched),
        T(a_device_is_written_in_place_and_never_removed),
        T(a_symbolic_link_is_kept_and_its_file_replaced),
        T(a_folder_is_refused_as_an_output),
        T(the_same_file_is_recognised_under_another_name),
        T(a_partial_file_never_replaces_a_file_that_appeared),
        T(a_live_partial_file_is_left_alone_and_a_dead_one_moved_aside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
