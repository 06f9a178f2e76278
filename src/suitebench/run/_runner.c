/*
 * The in-sandbox runner, in C: the fast twin of _runner.py, speaking the same protocol.
 *
 * Why C: a judge program runs in about a millisecond, so the runner's own cost per run decides
 * whether isolation keeps up with a bare subprocess loop. vfork() from a tiny process, rlimits
 * and the uid drop done between vfork and exec, and one poll() loop cost a fraction of what the
 * same steps cost from Python. suitebench compiles this file once per machine and caches the
 * binary; without a C compiler it uses _runner.py instead.
 *
 * Per run: vfork a child that becomes its own process group, gets the run's rlimits, drops to
 * the unprivileged uid/gid if asked, and execs the program with pipes for stdin, stdout and
 * stderr. The runner writes stdin and reads output in one poll() loop (no deadlock), caps each
 * output stream while reading, kills the run at the wall-clock limit, and after the main process
 * ends kills every process the run left behind: it is the child subreaper, so a double-forked
 * setsid daemon is re-parented to it and found through /proc. It reports raw facts; the
 * coordinator decides the status.
 *
 * Protocol (integers big-endian):
 *   config: u32 argc, argc x str; u32 envc, envc x str; str cwd; i64 uid; i64 gid;
 *           u64 wall_us; u64 output_bytes; u32 n, n x (u32 resource, i64 soft, i64 hard);
 *           u32 flags (1: /tmp and /dev/shm are private to this sandbox, empty them of the
 *           program's files after every run; 2: a new IPC namespace for every run); str seccomp
 *           (a compiled BPF filter every program is started under, or empty), where str = u32
 *           length + bytes and -1 means "none" / RLIM_INFINITY.
 *   ready:  the four bytes "RDY1".
 *   run:    u64 length + stdin bytes  ->  reply: i32 exit_code (-1 none), i32 signal (0 none),
 *           u64 wall_ns, u64 cpu_ns, u64 maxrss_kb, u32 killed (0 -, 1 wall, 2 output),
 *           u32 leftovers, u32 flags (1 stdout truncated, 2 stderr truncated),
 *           u64 stdout_len, u64 stderr_len, u32 exec_error_len, then those bytes in that order.
 *   EOF on stdin ends the runner.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <ftw.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

static char **g_argv, **g_envp, *g_cwd;
static int64_t g_uid = -1, g_gid = -1;
static uint64_t g_wall_us, g_cap;
static uint32_t g_nrl, g_flags;
static struct sock_fprog g_filter; /* len 0: no filter */
static struct { uint32_t res; int64_t soft, hard; } *g_rl;
static pid_t g_self;
static double g_cpu;
static long g_maxrss;

static void die(const char *what) {
    fprintf(stderr, "runner: %s: %s\n", what, strerror(errno));
    exit(3);
}

static int read_exact(int fd, void *buf, size_t n) {
    char *p = buf;
    while (n > 0) {
        ssize_t k = read(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static void write_all(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) die("write to coordinator");
        p += k;
        n -= (size_t)k;
    }
}

static uint64_t rd_u64(int fd) {
    unsigned char b[8];
    if (read_exact(fd, b, 8)) die("config");
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | b[i];
    return v;
}

static uint32_t rd_u32(int fd) {
    unsigned char b[4];
    if (read_exact(fd, b, 4)) die("config");
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static char *rd_str(int fd) {
    uint32_t n = rd_u32(fd);
    char *s = malloc((size_t)n + 1);
    if (!s || read_exact(fd, s, n)) die("config");
    s[n] = 0;
    return s;
}

static char **rd_strv(int fd) {
    uint32_t n = rd_u32(fd);
    char **v = calloc((size_t)n + 1, sizeof *v);
    if (!v) die("config");
    for (uint32_t i = 0; i < n; i++) v[i] = rd_str(fd);
    return v;
}

typedef struct { unsigned char *p; size_t n, cap; } buf_t;

static void put_u32(buf_t *b, uint32_t v) {
    for (int i = 3; i >= 0; i--) b->p[b->n++] = (unsigned char)(v >> (8 * i));
}

static void put_u64(buf_t *b, uint64_t v) {
    for (int i = 7; i >= 0; i--) b->p[b->n++] = (unsigned char)(v >> (8 * i));
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void account(const struct rusage *ru) {
    g_cpu += ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6;
    g_cpu += ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
    if (ru->ru_maxrss > g_maxrss) g_maxrss = ru->ru_maxrss;
}

/* Reap exited descendants; 1 when none are left at all. */
static int reap_nohang(void) {
    for (;;) {
        struct rusage ru;
        int st;
        pid_t p = wait4(-1, &st, WNOHANG, &ru);
        if (p < 0) return errno == ECHILD ? 1 : 0;
        if (p == 0) return 0;
        account(&ru);
    }
}

/* SIGKILL every live descendant of this runner found in /proc; returns how many. */
static int kill_descendants(void) {
    size_t n = 0, cap = 256;
    pid_t *pid = malloc(cap * sizeof *pid), *ppid = malloc(cap * sizeof *ppid);
    DIR *d = opendir("/proc");
    struct dirent *e;
    char path[300], stat[512];
    while (d && (e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t k = read(fd, stat, sizeof stat - 1);
        close(fd);
        if (k <= 0) continue;
        stat[k] = 0;
        char *rp = strrchr(stat, ')');
        if (!rp) continue;
        char state;
        int pp;
        if (sscanf(rp + 2, "%c %d", &state, &pp) != 2) continue;
        if (n == cap) {
            cap *= 2;
            pid = realloc(pid, cap * sizeof *pid);
            ppid = realloc(ppid, cap * sizeof *ppid);
        }
        pid[n] = atoi(e->d_name);
        ppid[n] = pp;
        n++;
    }
    if (d) closedir(d);
    char *mark = calloc(n ? n : 1, 1);
    int killed = 0, changed = 1;
    while (changed) { /* mark the transitive children of g_self */
        changed = 0;
        for (size_t i = 0; i < n; i++) {
            if (mark[i]) continue;
            int parent_marked = ppid[i] == g_self;
            for (size_t j = 0; !parent_marked && j < n; j++)
                parent_marked = mark[j] && pid[j] == ppid[i];
            if (parent_marked) {
                mark[i] = 1;
                changed = 1;
                if (kill(pid[i], SIGKILL) == 0) killed++;
            }
        }
    }
    free(mark);
    free(pid);
    free(ppid);
    return killed;
}

static int kill_leftovers(pid_t pgid) {
    kill(-pgid, SIGKILL);
    int found = 0;
    while (!reap_nohang()) {
        found += kill_descendants();
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return found;
}

static int chmod_dir(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)ftw;
    if (type == FTW_D || type == FTW_DNR) chmod(path, (st->st_mode & 07777) | 0700);
    return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st;
    (void)ftw;
    if (type == FTW_DP) rmdir(path);
    else unlink(path);
    return 0;
}

/* The names the work dir held when the session started: the caller's, kept between runs. */
static char **g_initial;
static size_t g_ninitial;

static int is_initial(const char *name) {
    for (size_t i = 0; i < g_ninitial; i++)
        if (!strcmp(g_initial[i], name)) return 1;
    return 0;
}

static void note_initial(void) {
    DIR *d = opendir(g_cwd);
    if (!d) return;
    struct dirent *e;
    size_t cap = 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (g_ninitial == cap) {
            cap = cap ? cap * 2 : 16;
            g_initial = realloc(g_initial, cap * sizeof *g_initial);
            if (!g_initial) die("realloc");
        }
        g_initial[g_ninitial++] = strdup(e->d_name);
    }
    closedir(d);
}

/* Whether an entry of `dir` is the program's to remove: in /tmp, what its uid owns; in the
 * work dir, whatever was not there when the session started. */
static int removable(int in_tmp, const char *name, const struct stat *st) {
    if (in_tmp) return g_uid < 0 || st->st_uid == (uid_t)g_uid;
    return !is_initial(name);
}

/* Remove what a run left in `dir` (as the program's uid, which owns it; links are unlinked,
 * never followed), so the next run in the session starts as a fresh sandbox would. */
static void clean_dir(const char *dir, int in_tmp) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    int any = 0;
    while ((e = readdir(d))) {
        struct stat st;
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            removable(in_tmp, e->d_name, &st))
            any = 1;
    }
    closedir(d);
    if (!any) return;
    pid_t pid = fork();
    if (pid == 0) {
        if (g_gid >= 0 && (setgroups(0, NULL) || setresgid(g_gid, g_gid, g_gid))) _exit(1);
        if (g_uid >= 0 && setresuid(g_uid, g_uid, g_uid)) _exit(1);
        DIR *t = opendir(dir);
        char path[4096];
        while (t && (e = readdir(t))) {
            struct stat st;
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            if (fstatat(dirfd(t), e->d_name, &st, AT_SYMLINK_NOFOLLOW)) continue;
            if (!removable(in_tmp, e->d_name, &st)) continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            nftw(path, chmod_dir, 32, FTW_PHYS | FTW_MOUNT);
            nftw(path, remove_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
        }
        _exit(0);
    }
    if (pid > 0) {
        int st;
        struct rusage ru;
        while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR) {
        }
    }
}

/* A run's POSIX semaphores and shared memory (/dev/shm) are files like its /tmp ones: a run
 * that dies holding them must not hand them to the next. */
static void clean_tmp(void) {
    if (g_flags & 1) {
        clean_dir("/tmp", 1);
        clean_dir("/dev/shm", 1);
    }
}

static void set_nonblock(int fd, int on) {
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

/* Read what is there into b (capped); returns 0 at EOF, 1 otherwise; sets *trunc over the cap. */
static int read_capped(int fd, buf_t *b, int *trunc) {
    char tmp[65536];
    ssize_t k = read(fd, tmp, sizeof tmp);
    if (k < 0) return (errno == EAGAIN || errno == EINTR) ? 1 : 0;
    if (k == 0) return 0;
    size_t room = g_cap > b->n ? g_cap - b->n : 0;
    size_t take = (size_t)k > room ? room : (size_t)k;
    if ((size_t)k > room) *trunc = 1;
    if (b->n + take > b->cap) {
        size_t nc = b->cap ? b->cap : 65536;
        while (nc < b->n + take) nc *= 2;
        b->p = realloc(b->p, nc);
        if (!b->p) die("out of memory");
        b->cap = nc;
    }
    memcpy(b->p + b->n, tmp, take);
    b->n += take;
    return 1;
}

static volatile int child_errno;
static volatile const char *child_stage;

static void run_one(const unsigned char *in, size_t in_len) {
    int pin[2], pout[2], perr[2];
    if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) || pipe2(perr, O_CLOEXEC)) die("pipe");
    g_cpu = 0;
    g_maxrss = 0;
    child_errno = 0;
    child_stage = "";
    double t0 = now();
    pid_t pid = vfork();
    if (pid == 0) {
        /* Only system calls from here to exec: the parent's memory is shared until then. */
        child_stage = "setpgid";
        if (setpgid(0, 0)) goto fail;
        child_stage = "dup2";
        if (dup2(pin[0], 0) < 0 || dup2(pout[1], 1) < 0 || dup2(perr[1], 2) < 0) goto fail;
        signal(SIGPIPE, SIG_DFL);
        signal(SIGXFSZ, SIG_DFL);
        child_stage = "setrlimit";
        for (uint32_t i = 0; i < g_nrl; i++) {
            struct rlimit rl = {
                g_rl[i].soft < 0 ? RLIM_INFINITY : (rlim_t)g_rl[i].soft,
                g_rl[i].hard < 0 ? RLIM_INFINITY : (rlim_t)g_rl[i].hard,
            };
            if (setrlimit((int)g_rl[i].res, &rl)) goto fail;
        }
        umask(022);
        /* A run never sees the System V or POSIX IPC objects an earlier run left: its own IPC
         * namespace, made while the runner's privileges are still ours. */
        child_stage = "unshare(CLONE_NEWIPC)";
        if ((g_flags & 2) && unshare(CLONE_NEWIPC)) goto fail;
        child_stage = "setgid";
        if (g_gid >= 0 && (setgroups(0, NULL) || setresgid(g_gid, g_gid, g_gid))) goto fail;
        child_stage = "setuid";
        if (g_uid >= 0 && setresuid(g_uid, g_uid, g_uid)) goto fail;
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* after setuid, which clears it */
        /* The filter of refused system calls (run/syscalls.py), kept across exec and by every
         * process the program starts. */
        child_stage = "seccomp";
        if (g_filter.len && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
                             prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &g_filter)))
            goto fail;
        /* The program, not the runner, is the memory cgroup's first OOM victim. */
        int oom = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
        if (oom >= 0) {
            if (write(oom, "1000", 4) < 0) {
            }
            close(oom);
        }
        child_stage = "chdir";
        if (chdir(g_cwd)) goto fail;
        child_stage = "exec";
        execvpe(g_argv[0], g_argv, g_envp);
    fail:
        child_errno = errno ? errno : EINVAL;
        _exit(127);
    }
    if (pid < 0) die("vfork");
    close(pin[0]);
    close(pout[1]);
    close(perr[1]);

    buf_t out = {0}, err = {0};
    int trunc_out = 0, trunc_err = 0, killed = 0, have_status = 0, status = 0;
    struct rusage ru;
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    int in_fd = pin[1], out_fd = pout[0], err_fd = perr[0];
    size_t in_off = 0;
    set_nonblock(out_fd, 1);
    set_nonblock(err_fd, 1);
    if (in_len == 0 || child_errno) {
        close(in_fd);
        in_fd = -1;
    } else {
        set_nonblock(in_fd, 1);
    }
    double deadline = t0 + g_wall_us / 1e6, wall = 0;
    if (child_errno) {
        wait4(pid, &status, 0, &ru);
        have_status = 1;
    }
    while (!have_status) {
        double t = now();
        if (t >= deadline) {
            killed = 1;
            break;
        }
        struct pollfd fds[4];
        int nf = 0;
        if (in_fd >= 0) fds[nf++] = (struct pollfd){in_fd, POLLOUT, 0};
        if (out_fd >= 0) fds[nf++] = (struct pollfd){out_fd, POLLIN, 0};
        if (err_fd >= 0) fds[nf++] = (struct pollfd){err_fd, POLLIN, 0};
        if (pidfd >= 0) fds[nf++] = (struct pollfd){pidfd, POLLIN, 0};
        int timeout = (int)((deadline - t) * 1000) + 1;
        if (pidfd < 0 && timeout > 5) timeout = 5;
        if (poll(fds, (nfds_t)nf, timeout) < 0 && errno != EINTR) die("poll");
        for (int i = 0; i < nf; i++) {
            if (!fds[i].revents) continue;
            int fd = fds[i].fd;
            if (fd == in_fd) {
                size_t chunk = in_len - in_off > 65536 ? 65536 : in_len - in_off;
                ssize_t k;
                if (fds[i].revents & (POLLERR | POLLHUP)) {
                    errno = EPIPE; /* the program closed its stdin: stop feeding it */
                    k = -1;
                } else {
                    k = write(in_fd, in + in_off, chunk);
                }
                if (k > 0) in_off += (size_t)k;
                if ((k < 0 && errno != EAGAIN) || in_off >= in_len) {
                    close(in_fd);
                    in_fd = -1;
                }
            } else if (fd == out_fd) {
                if (!read_capped(out_fd, &out, &trunc_out)) {
                    close(out_fd);
                    out_fd = -1;
                }
            } else if (fd == err_fd) {
                if (!read_capped(err_fd, &err, &trunc_err)) {
                    close(err_fd);
                    err_fd = -1;
                }
            }
        }
        if (trunc_out || trunc_err) {
            killed = 2;
            break;
        }
        if (wait4(pid, &status, WNOHANG, &ru) == pid) have_status = 1;
    }
    wall = now() - t0;
    if (!have_status) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
        }
    }
    account(&ru);
    if (in_fd >= 0) close(in_fd);
    if (pidfd >= 0) close(pidfd);
    int leftovers = kill_leftovers(pid);
    clean_tmp();
    /* Every writer is gone now: drain what is left in the pipes, still capped. */
    if (out_fd >= 0) {
        set_nonblock(out_fd, 0);
        while (!trunc_out && read_capped(out_fd, &out, &trunc_out)) {
        }
        close(out_fd);
    }
    if (err_fd >= 0) {
        set_nonblock(err_fd, 0);
        while (!trunc_err && read_capped(err_fd, &err, &trunc_err)) {
        }
        close(err_fd);
    }
    if ((trunc_out || trunc_err) && !killed) killed = 2;

    char exec_error[256] = "";
    if (child_errno)
        snprintf(exec_error, sizeof exec_error, "%s: %s", (const char *)child_stage,
                 strerror(child_errno));
    size_t elen = strlen(exec_error);
    unsigned char hdr[128];
    buf_t h = {hdr, 0, sizeof hdr};
    put_u32(&h, WIFEXITED(status) ? (uint32_t)WEXITSTATUS(status) : (uint32_t)-1);
    put_u32(&h, WIFSIGNALED(status) ? (uint32_t)WTERMSIG(status) : 0);
    put_u64(&h, (uint64_t)(wall * 1e9));
    put_u64(&h, (uint64_t)(g_cpu * 1e9));
    put_u64(&h, (uint64_t)g_maxrss);
    put_u32(&h, (uint32_t)killed);
    put_u32(&h, (uint32_t)leftovers);
    put_u32(&h, (uint32_t)(trunc_out | trunc_err << 1));
    put_u64(&h, out.n);
    put_u64(&h, err.n);
    put_u32(&h, (uint32_t)elen);
    write_all(1, hdr, h.n);
    write_all(1, exec_error, elen);
    if (out.n) write_all(1, out.p, out.n);
    if (err.n) write_all(1, err.p, err.n);
    free(out.p);
    free(err.p);
}

int main(int argc, char **argv) {
    /* What a program reads in /proc/1/cmdline (the runner is pid 1 of its sandbox) names no
     * path of the host's: the runner's own argv is blanked. */
    if (argc > 0) memset(argv[0], 0, (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) - argv[0]));
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    signal(SIGPIPE, SIG_IGN);
    g_self = getpid();
    g_argv = rd_strv(0);
    g_envp = rd_strv(0);
    g_cwd = rd_str(0);
    g_uid = (int64_t)rd_u64(0);
    g_gid = (int64_t)rd_u64(0);
    g_wall_us = rd_u64(0);
    g_cap = rd_u64(0);
    g_nrl = rd_u32(0);
    g_rl = calloc(g_nrl ? g_nrl : 1, sizeof *g_rl);
    for (uint32_t i = 0; i < g_nrl; i++) {
        g_rl[i].res = rd_u32(0);
        g_rl[i].soft = (int64_t)rd_u64(0);
        g_rl[i].hard = (int64_t)rd_u64(0);
    }
    g_flags = rd_u32(0);
    uint32_t flen = rd_u32(0);
    if (flen % sizeof(struct sock_filter) || flen / sizeof(struct sock_filter) > 0xffff) {
        errno = EINVAL;
        die("seccomp filter");
    }
    g_filter.len = (unsigned short)(flen / sizeof(struct sock_filter));
    g_filter.filter = malloc(flen ? flen : 1);
    if (!g_filter.filter || read_exact(0, g_filter.filter, flen)) die("config");
    if (!g_argv[0]) {
        errno = EINVAL;
        die("empty argv");
    }
    note_initial();
    write_all(1, "RDY1", 4);
    unsigned long runs = 0;
    for (;;) {
        unsigned char lb[8];
        if (read_exact(0, lb, 8)) return 0;
        uint64_t n = 0;
        for (int i = 0; i < 8; i++) n = n << 8 | lb[i];
        unsigned char *in = malloc(n ? n : 1);
        if (!in || read_exact(0, in, n)) return 0;
        /* Each run but the first gets the work dir the session started with ($HOME is the
         * work dir unless the caller says otherwise); the last run's files stay for the
         * caller to read. */
        if (runs++) clean_dir(g_cwd, 0);
        run_one(in, n);
        free(in);
    }
}
