// The cooperative-pool check: finds the tasks that block a thread of Swift's cooperative pool.
//
// Loaded with LD_PRELOAD by scripts/pool-check.sh (into the test process and the esctl processes
// the tests start), never linked into a product. Not a SwiftPM target: the script compiles it.
//
// Why it works this way: on Linux, Swift's global executor runs every task on one libdispatch
// concurrent queue per priority whose width is the number of CPUs ("Swift global concurrent
// queue", made wide with dispatch_queue_set_width(queue, -3)), so on a 2-core machine two jobs at
// most run at once, whatever else libdispatch's thread pool does. A job that sleeps in the
// kernel (a blocking read, waitpid, a semaphore, a future's wait()) holds one of those two slots
// until it wakes, and every other task of that priority (timers, timeouts, a server's shutdown)
// waits behind it. CPU work between suspension points holds a slot too, but it is running; this
// check is about jobs that hold a slot while their thread sleeps.
//
// What it does:
//  - It interposes dispatch_queue_set_width to learn Swift's queues (and, with
//    ESTEST_POOL_WIDTH=N, to make them N wide: 1 makes any hidden dependence between two tasks a
//    deadlock this check reports).
//  - It interposes dispatch_async_f and dispatch_after_f on those queues to wrap each job, so it
//    knows which thread runs a job and since when.
//  - It interposes dispatch_release to forget a queue Swift releases: of two threads that race
//    to make a queue, Swift releases the loser's (already widened), and a probe posted to it
//    crashed processes in libdispatch.
//  - A watchdog thread (not a pool thread) looks at the threads running jobs every 20 ms: a job
//    whose thread has slept in the kernel (state S or D in /proc/self/task/TID/stat) for
//    ESTEST_POOL_BLOCKED_MS (default 1000) without a break is reported once, with its thread's
//    stack (walked by frame pointers in a handler of a signal sent to that thread), to the file
//    ESTEST_POOL_REPORT (appended to, one block per finding) and to standard error.
//    scripts/pool-check.sh fails when that file is not empty, and symbolizes its stacks.
//  - Diagnostics, off by default, that fail nothing: with ESTEST_POOL_STALL_MS=N a probe job
//    posted to each Swift queue tells (on standard error) when the queue has started nothing new
//    for N ms, how many jobs wait and what its slots run; with ESTEST_POOL_LONG_JOB_MS=N and
//    ESTEST_POOL_INFO=FILE, each job that runs N ms or more, asleep or not, has its stack
//    written to FILE (scripts/pool-check.sh symbolizes it into FILE.txt); with
//    ESTEST_POOL_PENDING_SAMPLE=N and ESTEST_POOL_INFO=FILE, the stack of whoever hands the pool a
//    job while N or more wait, at most every 100 ms.
//
// Everything here tolerates being loaded into a process that never uses Swift concurrency (a
// shell, PostgreSQL's tools): nothing starts until Swift makes its first queue.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <ucontext.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef void *dispatch_queue_t;
typedef void (*dispatch_function_t)(void *);
typedef uint64_t dispatch_time_t;

#define MAX_QUEUES 16
#define MAX_SLOTS 256
#define MAX_FRAMES 64

static const char swift_queue_label[] = "Swift global concurrent queue";

/// The real functions, found with RTLD_NEXT.
static void (*real_set_width)(dispatch_queue_t, long);
static void (*real_async_f)(dispatch_queue_t, void *, dispatch_function_t);
static void (*real_after_f)(dispatch_time_t, dispatch_queue_t, void *, dispatch_function_t);
static const char *(*real_get_label)(dispatch_queue_t);
static void (*real_release)(void *);

/// Swift's queues, as they are made (at most one per priority).
static _Atomic(dispatch_queue_t) queues[MAX_QUEUES];

/// One slot per thread that has run a Swift job: which thread, and the job it runs now.
struct slot {
    _Atomic pid_t tid;
    // The thread's stack, [low, high): the only memory the stack walk reads.
    uintptr_t stack_low, stack_high;
    _Atomic int64_t job_started_ns;  // 0 when the thread runs no job
    _Atomic uint64_t job_number;     // which job: a new job is a new finding
    // The watchdog's own bookkeeping (only the watchdog thread touches these).
    uint64_t watched_job;
    int64_t asleep_since_ns;
    int reported;
    int sampled;  // by the long-job diagnostic
};
static struct slot slots[MAX_SLOTS];
static _Atomic int slot_count;
static __thread int my_slot = -1;

/// A job as wrapped: the real function and context.
struct wrapped {
    dispatch_function_t function;
    void *context;
};

static int64_t blocked_threshold_ns = 1000LL * 1000 * 1000;
static int report_fd = -1;
static int info_fd = -1;
/// With ESTEST_POOL_PENDING_SAMPLE=N (and ESTEST_POOL_INFO): the stack of whoever enqueues a job
/// while N or more wait, at most every 100 ms.
static int64_t pending_sample = 0;
static _Atomic int64_t last_pending_sample_ns;

/// Jobs handed to Swift's queues and not started yet (for the stall diagnostic).
static _Atomic int64_t pending_jobs;
static pthread_once_t start_once = PTHREAD_ONCE_INIT;

/// A stack taken from inside the thread by the capture signal.
static int capture_signal;
static _Atomic pid_t capture_tid;
static uintptr_t capture_low, capture_high;
#define MAX_STACK_WORDS 16384
static void *capture_frames[MAX_FRAMES];
static uintptr_t capture_words[MAX_STACK_WORDS];
static _Atomic int capture_count = -1;

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static pid_t current_tid(void) { return (pid_t)syscall(SYS_gettid); }

/// What a queue's entry holds once Swift released it: Swift makes its queues lazily, and of two
/// threads that race to make one, the loser releases its queue (widened already) at once.
#define FORGOTTEN ((dispatch_queue_t)(uintptr_t)1)

/// Whether Swift has been given jobs through each queue: only those get probes (a queue that
/// never ran a job may be a race's loser, freed under the watchdog).
static _Atomic int queue_used[MAX_QUEUES];

/// Whether `queue` is one of Swift's, marking it used when `use` is set.
static int is_swift_queue(dispatch_queue_t queue, int use) {
    for (int index = 0; index < MAX_QUEUES; index++) {
        dispatch_queue_t known = atomic_load_explicit(&queues[index], memory_order_acquire);
        if (known == NULL) return 0;
        if (known == queue) {
            if (use && !atomic_load_explicit(&queue_used[index], memory_order_relaxed)) atomic_store(&queue_used[index], 1);
            return 1;
        }
    }
    return 0;
}

/// Forgets `queue` if it is one of Swift's (it is being released).
static void forget_queue(dispatch_queue_t queue) {
    for (int index = 0; index < MAX_QUEUES; index++) {
        dispatch_queue_t expected = queue;
        if (atomic_compare_exchange_strong(&queues[index], &expected, FORGOTTEN)) return;
        if (expected == NULL) return;
    }
}

static void remember_queue(dispatch_queue_t queue) {
    for (int index = 0; index < MAX_QUEUES; index++) {
        dispatch_queue_t expected = NULL;
        if (atomic_compare_exchange_strong(&queues[index], &expected, queue)) return;
        if (expected == queue) return;
    }
}

static void run_wrapped(void *context) {
    struct wrapped job = *(struct wrapped *)context;
    free(context);
    atomic_fetch_sub(&pending_jobs, 1);
    if (my_slot < 0) {
        int index = atomic_fetch_add(&slot_count, 1);
        if (index < MAX_SLOTS) {
            my_slot = index;
            pthread_attr_t attributes;
            if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
                void *low = NULL;
                size_t size = 0;
                if (pthread_attr_getstack(&attributes, &low, &size) == 0) {
                    slots[index].stack_low = (uintptr_t)low;
                    slots[index].stack_high = (uintptr_t)low + size;
                }
                pthread_attr_destroy(&attributes);
            }
            atomic_store(&slots[index].tid, current_tid());
            // libdispatch's workers block every signal: let the capture signal through here.
            if (capture_signal != 0) {
                sigset_t capture;
                sigemptyset(&capture);
                sigaddset(&capture, capture_signal);
                pthread_sigmask(SIG_UNBLOCK, &capture, NULL);
            }
        } else {
            my_slot = MAX_SLOTS;  // untracked: more threads than slots
        }
    }
    struct slot *slot = my_slot < MAX_SLOTS ? &slots[my_slot] : NULL;
    // A job may run another inline (dispatch does not nest Swift jobs, but stay correct if it does).
    int64_t outer = slot ? atomic_load(&slot->job_started_ns) : 0;
    if (slot) {
        atomic_fetch_add(&slot->job_number, 1);
        atomic_store(&slot->job_started_ns, now_ns());
    }
    job.function(job.context);
    if (slot) atomic_store(&slot->job_started_ns, outer);
}

static void sample_enqueuer(int64_t pending);

static void *wrap(void *context, dispatch_function_t function) {
    struct wrapped *job = malloc(sizeof *job);
    if (job == NULL) return NULL;
    job->function = function;
    job->context = context;
    int64_t pending = atomic_fetch_add(&pending_jobs, 1) + 1;
    if (pending_sample > 0 && pending >= pending_sample) sample_enqueuer(pending);
    return job;
}

/// The thread's scheduler state ('R', 'S', 'D', ...) and its current system call, or 0.
static char thread_state(pid_t tid, char *syscall_text, size_t syscall_size) {
    char path[64], buffer[1024];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t count = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (count <= 0) return 0;
    buffer[count] = 0;
    char *end = strrchr(buffer, ')');
    if (end == NULL || end[1] == 0 || end[2] == 0) return 0;
    char state = end[2];
    if (syscall_text != NULL && syscall_size > 0) {
        syscall_text[0] = 0;
        snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            count = read(fd, syscall_text, syscall_size - 1);
            close(fd);
            if (count > 0) {
                syscall_text[count] = 0;
                char *space = strchr(syscall_text, ' ');
                if (space) *space = 0;  // the number only: the arguments are addresses
                char *newline = strchr(syscall_text, '\n');
                if (newline) *newline = 0;
            } else {
                syscall_text[0] = 0;
            }
        }
    }
    return state;
}

/// The name of the system call whose number `number` starts with; NULL for another text.
static const char *syscall_name(const char *number) {
    if (number[0] < '0' || number[0] > '9') return NULL;
    switch (atoi(number)) {
    case 0: return "read";
    case 1: return "write";
    case 7: return "poll";
    case 23: return "select";
    case 35: return "nanosleep";
    case 56: return "clone";
    case 57: return "fork";
    case 61: return "wait4";
    case 74: return "fsync";
    case 202: return "futex";
    case 230: return "clock_nanosleep";
    case 232: return "epoll_wait";
    case 247: return "waitid";
    case 270: return "pselect6";
    case 271: return "ppoll";
    case 281: return "epoll_pwait";
    case 435: return "clone3";
    default: return NULL;
    }
}

/// Copies the interrupted thread's stack, from its stack pointer up (at most MAX_STACK_WORDS
/// words, nothing outside the thread's stack), and the interrupted instruction: async-signal-safe,
/// unlike an unwinder, which crashed processes when it met frames it could not read. The
/// watchdog then keeps the words that point into code: the return addresses, innermost first
/// (with some stale ones: a scan, not an unwind; libc keeps no frame pointers to walk).
static void capture_handler(int number, siginfo_t *info, void *context) {
    (void)number;
    (void)info;
    if (atomic_load(&capture_tid) != current_tid()) return;
    int count = 0;
#if defined(__x86_64__)
    ucontext_t *interrupted = context;
    capture_frames[0] = (void *)interrupted->uc_mcontext.gregs[REG_RIP];
    uintptr_t sp = (uintptr_t)interrupted->uc_mcontext.gregs[REG_RSP];
    if (sp >= capture_low && sp % sizeof(uintptr_t) == 0) {
        for (uintptr_t word = sp; word + sizeof(uintptr_t) <= capture_high && count < MAX_STACK_WORDS; word += sizeof(uintptr_t)) {
            capture_words[count++] = *(uintptr_t *)word;
        }
    }
    atomic_store(&capture_count, count);
#else
    (void)context;
    atomic_store(&capture_count, 0);
#endif
}

/// Whether `address` is in a mapping of this process that holds code.
static int is_code(uintptr_t address, const uintptr_t (*ranges)[2], int range_count) {
    for (int index = 0; index < range_count; index++) {
        if (address >= ranges[index][0] && address < ranges[index][1]) return 1;
    }
    return 0;
}

/// The executable mappings of this process, from /proc/self/maps; their number.
static int code_ranges(uintptr_t (*ranges)[2], int capacity) {
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps == NULL) return 0;
    int count = 0;
    char line[512];
    while (count < capacity && fgets(line, sizeof line, maps) != NULL) {
        unsigned long start, end;
        char permissions[8];
        if (sscanf(line, "%lx-%lx %7s", &start, &end, permissions) == 3 && permissions[2] == 'x') {
            ranges[count][0] = start;
            ranges[count][1] = end;
            count++;
        }
    }
    fclose(maps);
    return count;
}

static void write_all(int fd, const char *text, size_t length) {
    while (length > 0) {
        ssize_t written = write(fd, text, length);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return;
        text += written;
        length -= (size_t)written;
    }
}

/// Writes a finding to the report and standard error, or (`info`) a diagnostic to the info file.
static void emit(const char *text, int info) {
    size_t length = strlen(text);
    if (info) {
        if (info_fd >= 0) write_all(info_fd, text, length);
        return;
    }
    if (report_fd >= 0) write_all(report_fd, text, length);
    write_all(2, text, length);
}

/// Reports a job that has slept `asleep_ns` on thread `tid`, with the thread's stack.
static void report(pid_t tid, uintptr_t low, uintptr_t high, int64_t asleep_ns, int64_t running_ns, const char *syscall_number, int info) {
    char executable[512] = "?";
    ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
    if (length > 0) executable[length] = 0;
    // The command line, to tell the processes a suite starts apart.
    char command[256] = "";
    int cmdline = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (cmdline >= 0) {
        ssize_t got = read(cmdline, command, sizeof command - 1);
        close(cmdline);
        if (got < 0) got = 0;
        command[got] = 0;
        for (ssize_t index = 0; index + 1 < got; index++) {
            if (command[index] == 0) command[index] = ' ';
        }
    }
    const char *name = syscall_name(syscall_number);
    char header[1024];
    if (info) {
        snprintf(header, sizeof header,
                 "pool-check(info): a job has run %.1f s (%s; process %d, thread %d, `%s`). The code addresses on its stack, innermost first:\n",
                 (double)running_ns / 1e9, name ? name : syscall_number, getpid(), tid, command);
    } else snprintf(header, sizeof header,
             "pool-check: a task blocked a thread of Swift's cooperative pool: it has slept in the kernel (%s%s%s) "
             "for %.1f s of the %.1f s it has run (process %d, %s, thread %d, `%s`). The code addresses on its stack, innermost first:\n",
             name ? name : "system call ", name ? "" : syscall_number, "", (double)asleep_ns / 1e9,
             (double)running_ns / 1e9, getpid(), executable, tid, command);
    // The finding first: should taking the stack go wrong, the finding is still reported.
    emit(header, info);
    // Take the stack inside the thread: the signal interrupts its wait for a moment (SA_RESTART).
    atomic_store(&capture_count, -1);
    capture_low = low;
    capture_high = high;
    atomic_store(&capture_tid, tid);
    int count = -1;
    if (capture_signal != 0 && syscall(SYS_tgkill, getpid(), tid, capture_signal) == 0) {
        for (int tries = 0; tries < 200 && (count = atomic_load(&capture_count)) < 0; tries++) usleep(1000);
    }
    atomic_store(&capture_tid, 0);
    if (count >= 0) {
        // Keep the words that point into code, innermost first, after the interrupted instruction.
        static uintptr_t ranges[1024][2];
        int range_count = code_ranges(ranges, 1024);
        int words = count;
        count = 1;
        for (int index = 0; index < words && count < MAX_FRAMES; index++) {
            uintptr_t word = capture_words[index];
            if (is_code(word, (const uintptr_t (*)[2])ranges, range_count) && (void *)word != capture_frames[count - 1]) {
                capture_frames[count++] = (void *)word;
            }
        }
    }
    char buffer[16384];
    size_t used = 0;
    buffer[0] = 0;
    if (count < 0) {
        used += (size_t)snprintf(buffer + used, sizeof buffer - used, "    (the stack could not be taken)\n");
    }
    for (int index = 0; index < count && used < sizeof buffer - 512; index++) {
        Dl_info info;
        void *address = capture_frames[index];
        if (dladdr(address, &info) && info.dli_fname != NULL) {
            uintptr_t offset = (uintptr_t)address - (uintptr_t)info.dli_fbase;
            used += (size_t)snprintf(buffer + used, sizeof buffer - used, "    #%-2d %s +0x%lx %s\n", index, info.dli_fname,
                                     (unsigned long)offset, info.dli_sname ? info.dli_sname : "");
        } else {
            used += (size_t)snprintf(buffer + used, sizeof buffer - used, "    #%-2d %p\n", index, address);
        }
    }
    if (used < sizeof buffer - 2) {
        buffer[used++] = '\n';
        buffer[used] = 0;
    }
    emit(buffer, info);
}

/// Writes the stack of this thread (which is enqueuing a job while `pending` wait) to the info file.
static void sample_enqueuer(int64_t pending) {
    int64_t now = now_ns();
    int64_t last = atomic_load(&last_pending_sample_ns);
    if (now - last < 100LL * 1000 * 1000 || !atomic_compare_exchange_strong(&last_pending_sample_ns, &last, now)) return;
    pthread_attr_t attributes;
    void *low = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return;
    int ok = pthread_attr_getstack(&attributes, &low, &size) == 0;
    pthread_attr_destroy(&attributes);
    if (!ok) return;
    static uintptr_t ranges[1024][2];
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    int range_count = code_ranges(ranges, 1024);
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    uintptr_t high = (uintptr_t)low + size;
    char buffer[8192];
    size_t used = (size_t)snprintf(buffer, sizeof buffer, "pool-check(info): a job enqueued while %lld wait (process %d, thread %d). The code addresses on its stack, innermost first:\n",
                                   (long long)pending, getpid(), current_tid());
    int frames = 0;
    for (uintptr_t word = here; word + sizeof(uintptr_t) <= high && frames < MAX_FRAMES && used < sizeof buffer - 512; word += sizeof(uintptr_t)) {
        uintptr_t value = *(uintptr_t *)word;
        if (!is_code(value, (const uintptr_t (*)[2])ranges, range_count)) continue;
        Dl_info info;
        if (dladdr((void *)value, &info) && info.dli_fname != NULL) {
            used += (size_t)snprintf(buffer + used, sizeof buffer - used, "    #%-2d %s +0x%lx\n", frames, info.dli_fname, (unsigned long)(value - (uintptr_t)info.dli_fbase));
            frames++;
        }
    }
    pthread_mutex_unlock(&lock);
    buffer[used++] = '\n';
    buffer[used] = 0;
    emit(buffer, 1);
}

/// Pool availability probes: one pending probe per queue; a probe that waits long means every
/// slot of that queue was held all that time.
static _Atomic int64_t probe_posted_ns[MAX_QUEUES];
static int64_t probe_reported_for[MAX_QUEUES];
static int64_t stall_threshold_ns = 0;
static int64_t long_job_ns = 0;

static void probe_ran(void *context) {
    int index = (int)(intptr_t)context;
    int64_t posted = atomic_load(&probe_posted_ns[index]);
    int64_t waited = now_ns() - posted;
    if (stall_threshold_ns > 0 && waited >= stall_threshold_ns) {
        char text[256];
        snprintf(text, sizeof text, "pool-check(info): queue %d ran nothing new for %.1f s (process %d)\n", index, (double)waited / 1e9, getpid());
        write_all(2, text, strlen(text));
    }
    atomic_store(&probe_posted_ns[index], 0);
}

static void describe_slots(int queue_index, int64_t waited) {
    char text[4096];
    size_t used = (size_t)snprintf(text, sizeof text, "pool-check(info): queue %d has run nothing new for %.1f s (process %d); %lld jobs wait; jobs running:\n", queue_index, (double)waited / 1e9, getpid(), (long long)atomic_load(&pending_jobs));
    int count = atomic_load(&slot_count);
    if (count > MAX_SLOTS) count = MAX_SLOTS;
    int64_t now = now_ns();
    for (int index = 0; index < count && used < sizeof text - 200; index++) {
        int64_t started = atomic_load(&slots[index].job_started_ns);
        if (started == 0) continue;
        char syscall_text[64];
        char state = thread_state(atomic_load(&slots[index].tid), syscall_text, sizeof syscall_text);
        const char *name = syscall_name(syscall_text);
        used += (size_t)snprintf(text + used, sizeof text - used, "    thread %d: state %c, %s, running %.2f s\n", atomic_load(&slots[index].tid), state ? state : '?',
                                 state == 'R' ? "on a CPU" : (name ? name : syscall_text), (double)(now - started) / 1e9);
    }
    write_all(2, text, used);
}

static void *watchdog(void *unused) {
    (void)unused;
    for (;;) {
        usleep(20 * 1000);
        if (stall_threshold_ns > 0) {
            for (int index = 0; index < MAX_QUEUES; index++) {
                dispatch_queue_t queue = atomic_load(&queues[index]);
                if (queue == NULL) break;
                if (queue == FORGOTTEN || !atomic_load(&queue_used[index])) continue;
                int64_t posted = atomic_load(&probe_posted_ns[index]);
                if (posted == 0) {
                    atomic_store(&probe_posted_ns[index], now_ns());
                    real_async_f(queue, (void *)(intptr_t)index, probe_ran);
                } else if (now_ns() - posted >= stall_threshold_ns && probe_reported_for[index] != posted) {
                    probe_reported_for[index] = posted;
                    describe_slots(index, now_ns() - posted);
                }
            }
        }
        int count = atomic_load(&slot_count);
        if (count > MAX_SLOTS) count = MAX_SLOTS;
        int64_t now = now_ns();
        for (int index = 0; index < count; index++) {
            struct slot *slot = &slots[index];
            int64_t started = atomic_load(&slot->job_started_ns);
            uint64_t job = atomic_load(&slot->job_number);
            if (started == 0) {
                slot->asleep_since_ns = 0;
                continue;
            }
            if (job != slot->watched_job) {
                slot->watched_job = job;
                slot->asleep_since_ns = 0;
                slot->reported = 0;
                slot->sampled = 0;
            }
            char syscall_text[64];
            char state = thread_state(atomic_load(&slot->tid), syscall_text, sizeof syscall_text);
            if (long_job_ns > 0 && !slot->sampled && now - started >= long_job_ns) {
                slot->sampled = 1;
                report(atomic_load(&slot->tid), slot->stack_low, slot->stack_high, 0, now - started, state == 'R' ? "on a CPU" : syscall_text, 1);
            }
            if (state != 'S' && state != 'D') {
                slot->asleep_since_ns = 0;
                continue;
            }
            if (slot->asleep_since_ns == 0) slot->asleep_since_ns = now;
            if (!slot->reported && now - slot->asleep_since_ns >= blocked_threshold_ns) {
                slot->reported = 1;
                report(atomic_load(&slot->tid), slot->stack_low, slot->stack_high, now - slot->asleep_since_ns, now - started, syscall_text, 0);
            }
        }
    }
    return NULL;
}

static void start(void) {
    const char *threshold = getenv("ESTEST_POOL_BLOCKED_MS");
    if (threshold != NULL && atoll(threshold) > 0) blocked_threshold_ns = atoll(threshold) * 1000LL * 1000;
    const char *long_job = getenv("ESTEST_POOL_LONG_JOB_MS");
    const char *info_path = getenv("ESTEST_POOL_INFO");
    if (long_job != NULL && atoll(long_job) > 0 && info_path != NULL && *info_path != 0) {
        long_job_ns = atoll(long_job) * 1000LL * 1000;
        info_fd = open(info_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    }
    const char *sample = getenv("ESTEST_POOL_PENDING_SAMPLE");
    if (sample != NULL && atoll(sample) > 0 && info_path != NULL && *info_path != 0) {
        pending_sample = atoll(sample);
        if (info_fd < 0) info_fd = open(info_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    }
    const char *stall = getenv("ESTEST_POOL_STALL_MS");
    if (stall != NULL && atoll(stall) > 0) stall_threshold_ns = atoll(stall) * 1000LL * 1000;
    const char *path = getenv("ESTEST_POOL_REPORT");
    if (path != NULL && *path != 0) report_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    // A real-time signal nobody else handles, for taking stacks.
    for (int number = SIGRTMAX - 1; number > SIGRTMIN + 4; number--) {
        struct sigaction current;
        if (sigaction(number, NULL, &current) == 0 && current.sa_handler == SIG_DFL) {
            struct sigaction action;
            memset(&action, 0, sizeof action);
            action.sa_sigaction = capture_handler;
            action.sa_flags = SA_RESTART | SA_SIGINFO;
            sigemptyset(&action.sa_mask);
            if (sigaction(number, &action, NULL) == 0) {
                capture_signal = number;
                break;
            }
        }
    }
    pthread_t thread;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    // Block every signal in the watchdog thread: process-directed signals go to other threads.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pthread_create(&thread, &attributes, watchdog, NULL);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    pthread_attr_destroy(&attributes);
}

/// Whether this process is one to check: its executable's name is in ESTEST_POOL_PROCESSES
/// (a comma-separated list), or that variable is unset.
static int checks_this_process(void) {
    const char *list = getenv("ESTEST_POOL_PROCESSES");
    if (list == NULL || *list == 0) return 1;
    char executable[512];
    ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
    if (length <= 0) return 0;
    executable[length] = 0;
    const char *name = strrchr(executable, '/');
    name = name ? name + 1 : executable;
    size_t name_length = strlen(name);
    for (const char *item = list; *item != 0;) {
        const char *comma = strchr(item, ',');
        size_t item_length = comma ? (size_t)(comma - item) : strlen(item);
        if (item_length == name_length && strncmp(item, name, name_length) == 0) return 1;
        if (comma == NULL) break;
        item = comma + 1;
    }
    return 0;
}

static void resolve(void) {
    if (real_set_width == NULL) real_set_width = (void (*)(dispatch_queue_t, long))dlsym(RTLD_NEXT, "dispatch_queue_set_width");
    if (real_async_f == NULL) real_async_f = (void (*)(dispatch_queue_t, void *, dispatch_function_t))dlsym(RTLD_NEXT, "dispatch_async_f");
    if (real_after_f == NULL)
        real_after_f = (void (*)(dispatch_time_t, dispatch_queue_t, void *, dispatch_function_t))dlsym(RTLD_NEXT, "dispatch_after_f");
    if (real_get_label == NULL) real_get_label = (const char *(*)(dispatch_queue_t))dlsym(RTLD_NEXT, "dispatch_queue_get_label");
    if (real_release == NULL) real_release = (void (*)(void *))dlsym(RTLD_NEXT, "dispatch_release");
}

void dispatch_release(void *object) {
    resolve();
    forget_queue((dispatch_queue_t)object);
    real_release(object);
}

void dispatch_queue_set_width(dispatch_queue_t queue, long width) {
    resolve();
    const char *label = real_get_label ? real_get_label(queue) : NULL;
    if (label != NULL && strcmp(label, swift_queue_label) == 0 && checks_this_process()) {
        remember_queue(queue);
        pthread_once(&start_once, start);
        const char *forced = getenv("ESTEST_POOL_WIDTH");
        if (forced != NULL && atol(forced) > 0) width = atol(forced);
    }
    real_set_width(queue, width);
}

void dispatch_async_f(dispatch_queue_t queue, void *context, dispatch_function_t function) {
    resolve();
    if (is_swift_queue(queue, 1)) {
        void *job = wrap(context, function);
        if (job != NULL) {
            real_async_f(queue, job, run_wrapped);
            return;
        }
    }
    real_async_f(queue, context, function);
}

void dispatch_after_f(dispatch_time_t when, dispatch_queue_t queue, void *context, dispatch_function_t function) {
    resolve();
    if (is_swift_queue(queue, 1)) {
        void *job = wrap(context, function);
        if (job != NULL) {
            real_after_f(when, queue, job, run_wrapped);
            return;
        }
    }
    real_after_f(when, queue, context, function);
}
