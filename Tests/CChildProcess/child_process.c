#define _GNU_SOURCE
#include "child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/// Marks every descriptor from 3 up close-on-exec; only async-signal-safe calls (this runs in a
/// forked child of a threaded process).
static void mark_descriptors_cloexec(void) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
#endif
    long maximum = sysconf(_SC_OPEN_MAX);
    if (maximum < 0 || maximum > 65536) maximum = 65536;
    for (int fd = 3; fd < maximum; fd++) {
        int flags = fcntl(fd, F_GETFD);
        if (flags >= 0) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
}

/// Reports `error` to the parent through `pipe_fd` and ends the child.
static void fail(int pipe_fd, int error) {
    ssize_t ignored = write(pipe_fd, &error, sizeof error);
    (void)ignored;
    _exit(127);
}

int child_process_spawn(const char *path, char *const argv[], char *const envp[], const char *directory, int stdin_fd,
                        int stdout_fd, int stderr_fd, pid_t *pid) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return errno;
    pid_t child = fork();
    if (child < 0) {
        int error = errno;
        close(report[0]);
        close(report[1]);
        return error;
    }
    if (child == 0) {
        setpgid(0, 0);
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        for (int number = 1; number < NSIG; number++) {
            if (number == SIGKILL || number == SIGSTOP) continue;
            signal(number, SIG_DFL);
        }
        // Descriptors 0-2 may already be among the sources: dup2 to fresh numbers first.
        int sources[3] = {stdin_fd, stdout_fd, stderr_fd};
        int copies[3];
        for (int index = 0; index < 3; index++) {
            copies[index] = fcntl(sources[index], F_DUPFD_CLOEXEC, 3);
            if (copies[index] < 0) fail(report[1], errno);
        }
        for (int index = 0; index < 3; index++) {
            if (dup2(copies[index], index) < 0) fail(report[1], errno);
        }
        mark_descriptors_cloexec();
        if (directory != NULL && chdir(directory) != 0) fail(report[1], errno);
        execve(path, argv, envp);
        fail(report[1], errno);
    }
    close(report[1]);
    int error = 0;
    ssize_t count;
    do {
        count = read(report[0], &error, sizeof error);
    } while (count < 0 && errno == EINTR);
    close(report[0]);
    if (count == (ssize_t)sizeof error) {
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        return error;
    }
    *pid = child;
    return 0;
}

int child_process_pipe(int ends[2]) { return pipe2(ends, O_CLOEXEC) == 0 ? 0 : errno; }
