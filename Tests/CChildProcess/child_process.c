#define _GNU_SOURCE
#include "child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

// posix_spawn, not fork: glibc starts the child with clone(CLONE_VM | CLONE_VFORK), so the test
// process's address space (hundreds of MB, dozens of threads) is not copied, and an exec failure
// comes back as the return value. fork took 0.1 to 0.2 s per child here and held a thread of
// Swift's cooperative pool all that time; with hundreds of children per suite run, that starved
// the timers and timeouts of the tests that ran beside them.
int child_process_spawn(const char *path, char *const argv[], char *const envp[], const char *directory, int stdin_fd,
                        int stdout_fd, int stderr_fd, pid_t *pid) {
    // Descriptors 0-2 may be among the sources: the child dup2s from fresh numbers above 2,
    // which closefrom(3) then closes with everything else.
    int sources[3] = {stdin_fd, stdout_fd, stderr_fd};
    int copies[3] = {-1, -1, -1};
    int error = 0;
    for (int index = 0; index < 3 && error == 0; index++) {
        copies[index] = fcntl(sources[index], F_DUPFD_CLOEXEC, 3);
        if (copies[index] < 0) error = errno;
    }
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int have_actions = 0, have_attributes = 0;
    if (error == 0) error = posix_spawn_file_actions_init(&actions);
    if (error == 0) have_actions = 1;
    for (int index = 0; index < 3 && error == 0; index++) {
        error = posix_spawn_file_actions_adddup2(&actions, copies[index], index);
    }
    if (error == 0) error = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (error == 0 && directory != NULL) error = posix_spawn_file_actions_addchdir_np(&actions, directory);
    if (error == 0) error = posix_spawnattr_init(&attributes);
    if (error == 0) have_attributes = 1;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if (error == 0) error = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (error == 0) error = posix_spawnattr_setpgroup(&attributes, 0);
    if (error == 0) error = posix_spawnattr_setsigmask(&attributes, &none);
    if (error == 0) error = posix_spawnattr_setsigdefault(&attributes, &all);
    if (error == 0) error = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    if (have_attributes) posix_spawnattr_destroy(&attributes);
    if (have_actions) posix_spawn_file_actions_destroy(&actions);
    for (int index = 0; index < 3; index++) {
        if (copies[index] >= 0) close(copies[index]);
    }
    return error;
}

int child_process_pipe(int ends[2]) { return pipe2(ends, O_CLOEXEC) == 0 ? 0 : errno; }
