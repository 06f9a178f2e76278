/* Build a sandbox's file system layout in a fresh mount namespace, then exec the runner in it.
 *
 * The unshare backend's equivalent of bubblewrap's mounts; the same job as _mount.py (the
 * fallback where no C compiler works), started by `unshare --mount ...` and compiled once per
 * machine like _runner.c, because starting Python with ctypes costs a sandbox start ~40 ms.
 *
 * Usage: _mount ROOT CWD N KIND PATH EXTRA ... (N triples) RUNNER-ARGV...
 * KIND is ro, rw (bind PATH at ROOT/PATH, read-only or not), dir (mkdir 0755), symlink (EXTRA
 * is the link text), dev (a tmpfs with the usual device nodes bound, a private shm of mode
 * 1777, EXTRA = its size in bytes or empty, fd links), proc (bind this pid namespace's
 * /proc), tmp (a tmpfs of mode 1777, EXTRA = size in bytes or empty). Operations come parents
 * first. Then ROOT is remounted read-only, the process chroots into it, enters CWD and execs
 * the runner. Exit status 125 and a message on stderr if anything fails; without arguments it
 * exits 3 (so a cached binary can be checked to start).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static void die(const char *what, const char *path) {
    fprintf(stderr, "suitebench sandbox layout: %s %s: %s\n", what, path, strerror(errno));
    exit(125);
}

static void mkdirs(const char *path, mode_t mode) {
    char buf[4096];
    size_t n = strlen(path);
    if (n >= sizeof buf) { errno = ENAMETOOLONG; die("mkdir", path); }
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, mode) != 0 && errno != EEXIST) die("mkdir", buf);
        *p = '/';
    }
    if (mkdir(buf, mode) != 0 && errno != EEXIST) die("mkdir", buf);
}

static void parent_dirs(const char *path) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    char *slash = strrchr(buf, '/');
    if (slash && slash != buf) { *slash = 0; mkdirs(buf, 0755); }
}

static void do_mount(const char *src, const char *target, const char *fstype,
                     unsigned long flags, const char *data) {
    if (mount(src, target, fstype, flags, data) != 0) die("mount on", target);
}

static void bind(const char *src, const char *target, int read_only) {
    struct stat st;
    if (stat(src, &st) != 0) die("stat", src);
    if (S_ISDIR(st.st_mode)) {
        mkdirs(target, 0755);
    } else {
        parent_dirs(target);
        int fd = open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) die("create", target);
        close(fd);
    }
    do_mount(src, target, NULL, MS_BIND | MS_REC, NULL);
    if (read_only) {
        struct statvfs sv;
        unsigned long keep = 0;
        if (statvfs(target, &sv) == 0) {
            if (sv.f_flag & ST_NOSUID) keep |= MS_NOSUID;
            if (sv.f_flag & ST_NODEV) keep |= MS_NODEV;
            if (sv.f_flag & ST_NOEXEC) keep |= MS_NOEXEC;
        }
        do_mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | keep, NULL);
    }
}

/* A fresh /dev; its shm is bounded like /tmp (else a program could fill the memory cgroup with
 * it and be killed rather than told ENOSPC). */
static void dev(const char *target, const char *shm_size) {
    static const char *nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
    static const char *links[][2] = {{"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"},
                                     {"stdout", "/proc/self/fd/1"},
                                     {"stderr", "/proc/self/fd/2"}};
    char a[4096], b[4096], opts[64];
    mkdirs(target, 0755);
    do_mount("dev", target, "tmpfs", MS_NOSUID, "mode=0755");
    for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++) {
        snprintf(a, sizeof a, "/dev/%s", nodes[i]);
        snprintf(b, sizeof b, "%s/%s", target, nodes[i]);
        if (access(a, F_OK) == 0) bind(a, b, 0);
    }
    snprintf(b, sizeof b, "%s/shm", target);
    mkdirs(b, 01777);
    if (*shm_size) snprintf(opts, sizeof opts, "mode=1777,size=%s", shm_size);
    else snprintf(opts, sizeof opts, "mode=1777");
    do_mount("shm", b, "tmpfs", MS_NOSUID | MS_NODEV, opts);
    for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
        snprintf(b, sizeof b, "%s/%s", target, links[i][0]);
        if (symlink(links[i][1], b) != 0) die("symlink", b);
    }
    /* Terminals of its own (pty tests of TUI programs), as bwrap's --dev gives. */
    snprintf(b, sizeof b, "%s/pts", target);
    mkdirs(b, 0755);
    do_mount("devpts", b, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620");
    snprintf(b, sizeof b, "%s/ptmx", target);
    if (symlink("pts/ptmx", b) != 0) die("symlink", b);
}

int main(int argc, char **argv) {
    if (argc < 4) return 3;
    const char *root = argv[1], *cwd = argv[2];
    long n = strtol(argv[3], NULL, 10);
    if (n < 0 || 4 + 3 * n >= argc) { fprintf(stderr, "suitebench sandbox layout: bad args\n"); return 125; }
    umask(022);
    do_mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
    do_mount("suitebench", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755");
    char target[4096];
    for (long i = 0; i < n; i++) {
        const char *kind = argv[4 + 3 * i], *path = argv[5 + 3 * i], *extra = argv[6 + 3 * i];
        if ((size_t)snprintf(target, sizeof target, "%s%s", root, path) >= sizeof target) {
            errno = ENAMETOOLONG;
            die("path", path);
        }
        if (!strcmp(kind, "ro") || !strcmp(kind, "rw")) {
            bind(path, target, kind[1] == 'o');
        } else if (!strcmp(kind, "dir")) {
            mkdirs(target, 0755);
        } else if (!strcmp(kind, "symlink")) {
            parent_dirs(target);
            if (symlink(extra, target) != 0) die("symlink", target);
        } else if (!strcmp(kind, "dev")) {
            dev(target, extra);
        } else if (!strcmp(kind, "proc")) {
            bind("/proc", target, 0);  /* unshare --mount-proc mounted this pid ns's /proc */
        } else if (!strcmp(kind, "tmp")) {
            char opts[64];
            mkdirs(target, 0755);
            if (*extra) snprintf(opts, sizeof opts, "mode=1777,size=%s", extra);
            else snprintf(opts, sizeof opts, "mode=1777");
            do_mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, opts);
        } else {
            fprintf(stderr, "suitebench sandbox layout: unknown operation %s\n", kind);
            return 125;
        }
    }
    do_mount(NULL, root, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL);
    if (chroot(root) != 0) die("chroot", root);
    if (chdir(cwd) != 0) die("chdir", cwd);
    char **rest = argv + 4 + 3 * n;
    execv(rest[0], rest);
    die("exec", rest[0]);
    return 125;
}
